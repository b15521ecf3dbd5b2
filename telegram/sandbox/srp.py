"""The server's side of Telegram's two-step verification check (SRP-2048, as in MTProto's docs).

The client proves it knows the password without sending it: Telethon's `compute_check` answers the
challenge built here, and `check` verifies the proof against the password stored in the world.
"""

import hashlib
import secrets

from telethon.password import big_num_for_hash, compute_hash, num_bytes_for_hash, sha256, xor
from telethon.tl import types

# Telegram's published 2048-bit safe prime and generator (Telethon accepts them without factorizing).
P = bytes.fromhex(
    "c71caeb9c6b1c9048e6c522f70f13f73980d40238e3e21c14934d037563d930f48198a0aa7c14058229493d22530f4db"
    "fa336f6e0ac925139543aed44cce7c3720fd51f69458705ac68cd4fe6b6b13abdc9746512969328454f18faf8c595f64"
    "2477fe96bb2a941d5bcd1d4ac8cc49880708fa9b378e3c4f3a9060bee67cf9a4a4a695811051907e162753b56b0f6b41"
    "0dba74d8a84b2a14b3144e0ef1284754fd17ed950d5965b4b9dd46582db1178d169c6bc465b0d6ff9ca3928fef5b9ae4"
    "e418fc15e83ebea0f87fa9ff5eed70050ded2849f47bf959d956850ce929851f0d8115f635b105ee2e4e15d04b2454bf"
    "6f4fadf034b10403119cd8e3b92fcc5b"
)
G = 3


def algo(phone: str) -> types.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow:
    # Salts fixed per account, as Telegram keeps them until the password changes.
    salt1 = hashlib.sha256(f"salt1:{phone}".encode()).digest()
    salt2 = hashlib.sha256(f"salt2:{phone}".encode()).digest()[:16]
    return types.PasswordKdfAlgoSHA256SHA256PBKDF2HMACSHA512iter100000SHA256ModPow(salt1=salt1, salt2=salt2, g=G, p=P)


def _verifier(phone: str, password: str) -> int:
    x = int.from_bytes(compute_hash(algo(phone), password), "big")
    return pow(G, x, int.from_bytes(P, "big"))


def _k() -> int:
    return int.from_bytes(sha256(num_bytes_for_hash(P), big_num_for_hash(G)), "big")


def challenge(phone: str, password: str) -> tuple[int, bytes]:
    """A fresh secret b and the public B = k·v + g^b (mod p) to send as srp_B."""
    p = int.from_bytes(P, "big")
    b = secrets.randbits(2048) % p
    public_b = (_k() * _verifier(phone, password) + pow(G, b, p)) % p
    return b, big_num_for_hash(public_b)


def check(*, phone: str, password: str, b: int, a_bytes: bytes, m1: bytes) -> bool:
    """Whether the client's proof M1 for its public A matches what the stored password gives."""
    p = int.from_bytes(P, "big")
    public_a = int.from_bytes(a_bytes, "big")
    if not 0 < public_a < p:
        return False
    b_bytes = big_num_for_hash((_k() * _verifier(phone, password) + pow(G, b, p)) % p)
    a_for_hash = num_bytes_for_hash(a_bytes)
    u = int.from_bytes(sha256(a_for_hash, b_bytes), "big")
    secret = pow(public_a * pow(_verifier(phone, password), u, p), b, p)
    key = sha256(big_num_for_hash(secret))
    p_for_hash, g_for_hash = num_bytes_for_hash(P), big_num_for_hash(G)
    algo_ = algo(phone)
    expected = sha256(
        xor(sha256(p_for_hash), sha256(g_for_hash)),
        sha256(algo_.salt1),
        sha256(algo_.salt2),
        a_for_hash,
        b_bytes,
        key,
    )
    return secrets.compare_digest(expected, m1)
