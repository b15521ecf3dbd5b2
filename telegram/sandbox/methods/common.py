"""What every method of the sandbox server needs: the call, who is logged in, and which chat is meant."""

from dataclasses import dataclass

from telethon.tl import types

from telegram.records import CHANNEL, GROUP, USER
from telegram.sandbox import bots, tl, world
from telegram.sandbox.faults import RpcAnswer
from telegram.sandbox.world import World


@dataclass
class Call:
    """One request as the server sees it: which key sent it, over which data centre, for which account."""

    world: World
    request: object
    key: dict
    dc_id: int
    phone: str  # the key's account, or the account the client says it serves before a login
    wait: float = 0.0  # seconds the answer is held back (the account's bandwidth)

    def me(self) -> dict:
        """The logged-in account; Telegram's 401s when the key is not logged in (any more)."""
        if self.key["state"] == "revoked":
            raise RpcAnswer(401, "SESSION_REVOKED")
        if self.key["state"] != "authorized":
            raise RpcAnswer(401, "AUTH_KEY_UNREGISTERED")
        account = self.world.account(self.key["phone"]) or bots.as_account(self.world, self.key["phone"])
        if account is None:
            raise RpcAnswer(401, "AUTH_KEY_UNREGISTERED")
        if account["banned"]:
            raise RpcAnswer(401, "USER_DEACTIVATED_BAN")
        return account


def peer_chat_id(peer) -> int | None:
    if isinstance(peer, types.InputPeerChannel | types.InputChannel | types.PeerChannel):
        return peer.channel_id
    if isinstance(peer, types.InputPeerChat | types.PeerChat):
        return peer.chat_id
    if isinstance(peer, types.InputPeerUser | types.InputUser | types.PeerUser):
        return peer.user_id
    return None


def file_reference_target(location) -> tuple[int, int]:
    """(chat_id, message_id) a download's file reference came from; (0, 0) when it names none."""
    read = tl.file_reference_read(getattr(location, "file_reference", b"") or b"")
    return (read[1], read[2]) if read else (0, 0)


def chat(call: Call, peer) -> tuple[dict, bool]:
    """The chat (or person) a request names, and whether the account is its admin; Telegram's errors when the
    account cannot see it (not a member, no private chat with that person, or another account's access hash)."""
    account = call.me()
    if isinstance(peer, types.InputPeerSelf):
        return call.world.saved_messages(account["phone"]), False
    chat_id = peer_chat_id(peer)
    row = call.world.chat(chat_id) if chat_id else None
    if isinstance(peer, types.InputPeerUser | types.InputUser):
        # Telegram knows a person to an account by the access hash it gave that account, and answers alike
        # for a wrong hash and for someone the account has never met.
        if (
            row is None
            or row["type"] != USER
            or peer.access_hash != tl.access_hash("user", account["phone"], chat_id)
            or call.world.membership(chat_id, account["phone"]) is None
        ):
            raise RpcAnswer(400, "PEER_ID_INVALID")
        return row, False
    if isinstance(peer, types.InputPeerChat):
        if row is None or row["type"] != GROUP:
            raise RpcAnswer(400, "CHAT_ID_INVALID")
    elif row is None or row["type"] in (GROUP, USER):
        raise RpcAnswer(400, "CHANNEL_INVALID" if chat_id else "PEER_ID_INVALID")
    elif peer.access_hash != tl.access_hash("chat", account["phone"], chat_id):
        raise RpcAnswer(400, "CHANNEL_INVALID")
    membership = call.world.membership(chat_id, account["phone"])
    if membership is None:
        raise RpcAnswer(400, "CHANNEL_PRIVATE" if row["type"] != GROUP else "CHAT_ID_INVALID")
    return row, membership == "admin"


def can_post(chat_row: dict, admin: bool) -> bool:
    return admin or (chat_row["type"] != CHANNEL and bool(chat_row["members_can_post"]))


def reference_fresh(call: Call, reference: bytes) -> tuple[int, int]:
    """The (chat_id, message_id) of a file reference still valid; FILE_REFERENCE_EXPIRED otherwise."""
    read = tl.file_reference_read(reference)
    if read is None or world.clock() - read[0] > call.world.meta("file_reference_ttl_seconds"):
        raise RpcAnswer(400, "FILE_REFERENCE_EXPIRED")
    return read[1], read[2]


def entities(call: Call, chat_rows: list[dict], senders: set[str | None] = frozenset()) -> tuple[list, list]:
    """The (chats, users) lists Telegram sends along with messages: every chat (and person) named, every sender."""
    phone = call.key["phone"]
    chats = [
        tl.chat_entity(
            row,
            phone=phone,
            admin=call.world.membership(row["id"], phone) == "admin",
            members_count=call.world.members_count(row["id"]),
        )
        for row in chat_rows
        if row["type"] != USER
    ]
    # Saved Messages is the account itself, already among the users.
    people = [
        tl.person(row, phone=phone)
        for row in chat_rows
        if row["type"] == USER and row["role"] != world.SAVED_MESSAGES_ROLE
    ]
    users = [tl.user(account, is_self=account["phone"] == phone) for account in call.world.accounts()]
    return chats, [user for user in users if user.is_self or f"+{user.phone}" in senders] + people
