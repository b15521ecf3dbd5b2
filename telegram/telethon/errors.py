"""Telethon errors mapped once to the taxonomy of `telegram.errors`.

Every gateway method runs inside `mapped_errors()` (or is decorated with `@maps_errors`), so callers
only ever see `telegram.errors` classes. Programming errors (TypeError, ValueError, ...) pass through.
"""

import functools
from collections.abc import Iterator
from contextlib import contextmanager

from telethon import errors
from telethon.errors.rpcerrorlist import rpc_errors_dict, rpc_errors_re

from telegram.errors import (
    AccountRestricted,
    AuthRequired,
    CodeExpired,
    CodeInvalid,
    FileReferenceExpired,
    FileTooLarge,
    FloodWait,
    LimitReached,
    LoginRefused,
    NotFound,
    PasswordInvalid,
    PasswordRequired,
    PhoneInvalid,
    TargetForbidden,
    TelegramError,
    TransientError,
)

# First match wins: specific errors before the HTTP-like families they belong to
# (SESSION_PASSWORD_NEEDED and USER_DEACTIVATED are 401s, FROZEN_METHOD_INVALID is a 420).
MAPPING: tuple[tuple[tuple[type[BaseException], ...], type[TelegramError]], ...] = (
    ((errors.SessionPasswordNeededError,), PasswordRequired),
    ((errors.PhoneNumberInvalidError, errors.PhoneNumberUnoccupiedError), PhoneInvalid),
    ((errors.PhoneCodeInvalidError, errors.PhoneCodeEmptyError), CodeInvalid),
    ((errors.PhoneCodeExpiredError, errors.PhoneCodeHashEmptyError, errors.PhoneHashExpiredError), CodeExpired),
    ((errors.PasswordHashInvalidError,), PasswordInvalid),
    ((errors.PhoneNumberFloodError, errors.PhonePasswordFloodError), LoginRefused),
    (
        (
            errors.PeerFloodError,
            errors.UserBannedInChannelError,
            errors.UserDeactivatedError,
            errors.UserDeactivatedBanError,
            errors.UserRestrictedError,
            errors.FrozenMethodInvalidError,
            errors.PhoneNumberBannedError,
        ),
        AccountRestricted,
    ),
    (
        (
            errors.AuthKeyUnregisteredError,
            errors.SessionRevokedError,
            errors.AuthKeyDuplicatedError,
            errors.SessionExpiredError,
            errors.AuthKeyInvalidError,
            errors.AuthKeyPermEmptyError,
            errors.AuthKeyNotFound,
        ),
        AuthRequired,
    ),
    (
        (
            errors.ChatWriteForbiddenError,
            errors.ChannelPrivateError,
            errors.TopicDeletedError,
            errors.ChatSendMediaForbiddenError,
            errors.ChatAdminRequiredError,
            errors.ChannelInvalidError,
            errors.ChatRestrictedError,
            errors.PeerIdInvalidError,
            errors.ChatIdInvalidError,
            errors.UserNotParticipantError,
            # a person: unknown to this account, deleted, blocked by them or blocking them
            errors.UserIdInvalidError,
            errors.InputUserDeactivatedError,
            errors.UserIsBlockedError,
            errors.YouBlockedUserError,
            # joining and adding writers: who may be added, and who may come back
            errors.UserPrivacyRestrictedError,
            errors.UserNotMutualContactError,
            errors.UserKickedError,
        ),
        TargetForbidden,
    ),
    (
        (
            errors.FileReferenceExpiredError,
            errors.FileReferenceInvalidError,
            errors.FileReferenceEmptyError,
            errors.FilerefUpgradeNeededError,
            errors.MediaEmptyError,
            errors.MediaInvalidError,
        ),
        FileReferenceExpired,
    ),
    ((errors.MessageIdInvalidError, errors.MsgIdInvalidError, errors.MessageIdsEmptyError), NotFound),
    # Joining: a link or a name that leads nowhere, and the limits of channels an account may be in.
    (
        (
            errors.InviteHashExpiredError,
            errors.InviteHashInvalidError,
            errors.InviteHashEmptyError,
            errors.UsernameNotOccupiedError,
            errors.UsernameInvalidError,
            errors.PhoneNotOccupiedError,
        ),
        NotFound,
    ),
    (
        (
            errors.ChannelsTooMuchError,
            errors.UserChannelsTooMuchError,
            errors.ChannelsAdminPublicTooMuchError,
            errors.ChannelsAdminLocatedTooMuchError,
        ),
        LimitReached,
    ),
    ((errors.FilePartsInvalidError, errors.FilePartTooBigError), FileTooLarge),
    ((errors.UnauthorizedError,), AuthRequired),
    # Other 403s are this chat's rules (CHAT_SEND_PHOTOS_FORBIDDEN, ...), not the account's.
    ((errors.ForbiddenError,), TargetForbidden),
    # Telethon reports network trouble as ConnectionError or TimeoutError (asyncio's is the same class);
    # other OSErrors are local files, not Telegram, and pass through. A FloodError without seconds has
    # no duration to honour, so it is retried with backoff like other transient trouble.
    (
        (
            errors.ServerError,
            errors.TimedOutError,
            errors.FilePartMissingError,
            errors.MsgWaitFailedError,
            errors.FloodError,
            errors.InvalidBufferError,
            ConnectionError,
            TimeoutError,
        ),
        TransientError,
    ),
)

# What a person reads for the errors worth more than their class's words (no full stop: callers go on after them).
OPERATOR_WORDS: dict[str, str] = {
    "CHANNEL_PRIVATE": "This account is not in this channel any more (it is private to it, or the account was removed)",
    "CHAT_WRITE_FORBIDDEN": "This account may not post in this chat",
    "CHAT_ADMIN_REQUIRED": "Only an admin of this chat may do that, and this account is not one",
    "TOPIC_CLOSED": "This forum topic is closed",
    "TOPIC_DELETED": "This forum topic was deleted",
    "PEER_FLOOD": "Telegram limits this account for now: it sent too many messages to chats that did not write first",
    "USER_DEACTIVATED_BAN": "Telegram has banned this account",
    "PHONE_NUMBER_BANNED": "Telegram has banned this phone number",
    "USER_BANNED_IN_CHANNEL": "This account is banned from posting in channels and groups",
    "AUTH_KEY_DUPLICATED": "Telegram ended this account's session: it was used from two places at once; log in again",
    "SESSION_REVOKED": "This account's Telegram session was ended (logged out elsewhere); log in again",
    "INVITE_HASH_EXPIRED": "This invite link has expired or was revoked; ask the chat's admins for a new one",
    "INVITE_HASH_INVALID": "This invite link is not valid; copy it again from Telegram, whole",
    "INVITE_HASH_EMPTY": "This invite link is not valid; copy it again from Telegram, whole",
    "USERNAME_NOT_OCCUPIED": "No channel or group has this @username; check its spelling",
    "USERNAME_INVALID": "This is not a valid @username; check its spelling",
    "PHONE_NOT_OCCUPIED": "No Telegram account has this phone number",
    "CHANNELS_TOO_MUCH": (
        "This account is in too many channels and groups (Telegram allows 500, 1000 with Premium); "
        "make it leave some first"
    ),
    "USER_CHANNELS_TOO_MUCH": "That account is in too many channels and groups to be added; make it leave some first",
    "CHANNELS_ADMIN_PUBLIC_TOO_MUCH": "This account already owns too many public channels; give one away first",
    "USER_PRIVACY_RESTRICTED": (
        "That account's privacy settings do not let others add it to channels; allow it in its Telegram privacy "
        "settings (Invites), then try again"
    ),
    "USER_NOT_MUTUAL_CONTACT": "That account only lets its mutual contacts add it; make the accounts contacts first",
    "USER_KICKED": "This account was removed from this chat by its admins and may not come back",
}

# Errors Telethon 1.45 has no class for, by Telegram's message.
BY_MESSAGE: dict[str, type[TelegramError]] = {
    "TOPIC_CLOSED": TargetForbidden,
}

_RPC_NAMES: dict[type, str] = {cls: name for name, cls in rpc_errors_dict.items()} | {
    cls: pattern.split("_(")[0] for pattern, cls in rpc_errors_re
}


def rpc_name(exc: BaseException) -> str:
    """Telegram's name for the error (FLOOD_WAIT, CHAT_WRITE_FORBIDDEN, ...), for logs."""
    if type(exc) in _RPC_NAMES:
        return _RPC_NAMES[type(exc)]
    if isinstance(exc, errors.RPCError) and exc.message:
        return exc.message
    return type(exc).__name__


def map_error(exc: BaseException) -> TelegramError | None:
    """The taxonomy error for a Telethon or network error; None for anything else."""
    rpc = rpc_name(exc)
    seconds = getattr(exc, "seconds", None)
    if isinstance(exc, errors.FloodError) and seconds is not None:
        return FloodWait(seconds, rpc=rpc)
    # The taxonomy's message, never Telethon's text ("... (caused by SignInRequest)"): a person reads it.
    words = OPERATOR_WORDS.get(rpc, "")
    if isinstance(exc, errors.RPCError) and exc.message in BY_MESSAGE:
        return BY_MESSAGE[exc.message](words, rpc=rpc)
    for classes, mapped in MAPPING:
        if isinstance(exc, classes):
            return mapped(words, rpc=rpc)
    if isinstance(exc, errors.RPCError):
        return TelegramError(f"Telegram refused the request ({rpc})", rpc=rpc)
    return None


@contextmanager
def mapped_errors() -> Iterator[None]:
    try:
        yield
    except Exception as exc:
        mapped = map_error(exc)
        if mapped is None:
            raise
        raise mapped from exc


def maps_errors(method):
    """Decorator for a gateway coroutine method: its errors leave mapped."""

    @functools.wraps(method)
    async def wrapper(*args, **kwargs):
        with mapped_errors():
            return await method(*args, **kwargs)

    return wrapper
