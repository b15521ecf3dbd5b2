"""Secrets at rest (Telegram sessions) sealed with Fernet; keys rotate newest first."""

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.views.decorators.debug import sensitive_variables


class SealBroken(Exception):
    """The value was sealed with a key that is no longer configured."""


def _fernet() -> MultiFernet:
    keys = settings.SESSION_ENCRYPTION_KEYS
    if not keys:
        raise ImproperlyConfigured("STASHCAST_SESSION_KEYS is empty; `make run` generates one into var/secret.env.")
    try:
        return MultiFernet([Fernet(key) for key in keys])
    except ValueError as exc:
        raise ImproperlyConfigured(f"STASHCAST_SESSION_KEYS holds a key that is not a Fernet key: {exc}") from None


@sensitive_variables("plaintext")
def seal(plaintext: str) -> str:
    if not plaintext:
        return ""
    return _fernet().encrypt(plaintext.encode()).decode()


def unseal(token: str) -> str:
    if not token:
        return ""
    try:
        return _fernet().decrypt(token.encode()).decode()
    except InvalidToken:
        raise SealBroken("This secret was sealed with a key that is no longer in STASHCAST_SESSION_KEYS.") from None


def reseal(token: str) -> str:
    """Re-encrypt with the newest key (for key rotation)."""
    if not token:
        return ""
    return _fernet().rotate(token.encode()).decode()


def sealed_with_newest_key(token: str) -> bool:
    """Whether the newest key (the first of STASHCAST_SESSION_KEYS) opens this value."""
    try:
        Fernet(settings.SESSION_ENCRYPTION_KEYS[0]).decrypt(token.encode())
    except InvalidToken:
        return False
    return True
