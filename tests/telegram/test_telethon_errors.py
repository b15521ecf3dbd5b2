"""Telethon's errors (the real classes, as Telethon raises them) mapped once to the taxonomy."""

import asyncio
import struct

import pytest
from telethon import errors

from telegram.errors import (
    AccountRestricted,
    AuthRequired,
    CodeExpired,
    CodeInvalid,
    FileReferenceExpired,
    FileTooLarge,
    FloodWait,
    LimitReached,
    NotFound,
    PasswordInvalid,
    PasswordRequired,
    PhoneInvalid,
    TargetForbidden,
    TelegramError,
    TransientError,
)
from telegram.telethon.errors import OPERATOR_WORDS, map_error, mapped_errors, maps_errors


@pytest.mark.parametrize(
    ("telethon_error", "seconds", "rpc"),
    [
        (errors.FloodWaitError(request=None, capture=30), 30, "FLOOD_WAIT"),
        (errors.FloodPremiumWaitError(request=None, capture=7), 7, "FLOOD_PREMIUM_WAIT"),
        (errors.SlowModeWaitError(request=None, capture=60), 60, "SLOWMODE_WAIT"),
    ],
)
def test_flood_waits_carry_their_seconds(telethon_error, seconds, rpc):
    mapped = map_error(telethon_error)

    assert type(mapped) is FloodWait
    assert (mapped.seconds, mapped.rpc) == (seconds, rpc)


@pytest.mark.parametrize(
    ("telethon_error", "expected", "rpc"),
    [
        (errors.PeerFloodError, AccountRestricted, "PEER_FLOOD"),
        (errors.UserBannedInChannelError, AccountRestricted, "USER_BANNED_IN_CHANNEL"),
        (errors.UserDeactivatedError, AccountRestricted, "USER_DEACTIVATED"),
        (errors.UserDeactivatedBanError, AccountRestricted, "USER_DEACTIVATED_BAN"),
        (errors.FrozenMethodInvalidError, AccountRestricted, "FROZEN_METHOD_INVALID"),
        (errors.AuthKeyUnregisteredError, AuthRequired, "AUTH_KEY_UNREGISTERED"),
        (errors.SessionRevokedError, AuthRequired, "SESSION_REVOKED"),
        (errors.AuthKeyDuplicatedError, AuthRequired, "AUTH_KEY_DUPLICATED"),
        (errors.SessionExpiredError, AuthRequired, "SESSION_EXPIRED"),
        (errors.ChatWriteForbiddenError, TargetForbidden, "CHAT_WRITE_FORBIDDEN"),
        (errors.ChannelPrivateError, TargetForbidden, "CHANNEL_PRIVATE"),
        (errors.TopicDeletedError, TargetForbidden, "TOPIC_DELETED"),
        (errors.ChatSendMediaForbiddenError, TargetForbidden, "CHAT_SEND_MEDIA_FORBIDDEN"),
        (errors.ChatSendPhotosForbiddenError, TargetForbidden, "CHAT_SEND_PHOTOS_FORBIDDEN"),
        (errors.ChatAdminRequiredError, TargetForbidden, "CHAT_ADMIN_REQUIRED"),
        (errors.ChannelInvalidError, TargetForbidden, "CHANNEL_INVALID"),
        (errors.FileReferenceExpiredError, FileReferenceExpired, "FILE_REFERENCE_EXPIRED"),
        (errors.MessageIdInvalidError, NotFound, "MESSAGE_ID_INVALID"),
        (errors.MsgIdInvalidError, NotFound, "MSG_ID_INVALID"),
        (errors.RpcCallFailError, TransientError, "RPC_CALL_FAIL"),
        (errors.TimedOutError, TransientError, "Timeout"),
        (errors.PhoneNumberInvalidError, PhoneInvalid, "PHONE_NUMBER_INVALID"),
        (errors.PhoneCodeInvalidError, CodeInvalid, "PHONE_CODE_INVALID"),
        (errors.PhoneCodeExpiredError, CodeExpired, "PHONE_CODE_EXPIRED"),
        (errors.SessionPasswordNeededError, PasswordRequired, "SESSION_PASSWORD_NEEDED"),
        (errors.PasswordHashInvalidError, PasswordInvalid, "PASSWORD_HASH_INVALID"),
        (errors.FilePartsInvalidError, FileTooLarge, "FILE_PARTS_INVALID"),
        (errors.FilePartTooBigError, FileTooLarge, "FILE_PART_TOO_BIG"),
        (errors.InviteHashExpiredError, NotFound, "INVITE_HASH_EXPIRED"),
        (errors.InviteHashInvalidError, NotFound, "INVITE_HASH_INVALID"),
        (errors.UsernameNotOccupiedError, NotFound, "USERNAME_NOT_OCCUPIED"),
        (errors.UsernameInvalidError, NotFound, "USERNAME_INVALID"),
        (errors.PhoneNotOccupiedError, NotFound, "PHONE_NOT_OCCUPIED"),
        (errors.ChannelsTooMuchError, LimitReached, "CHANNELS_TOO_MUCH"),
        (errors.UserChannelsTooMuchError, LimitReached, "USER_CHANNELS_TOO_MUCH"),
        (errors.UserPrivacyRestrictedError, TargetForbidden, "USER_PRIVACY_RESTRICTED"),
        (errors.UserNotMutualContactError, TargetForbidden, "USER_NOT_MUTUAL_CONTACT"),
        (errors.UserKickedError, TargetForbidden, "USER_KICKED"),
    ],
)
def test_telegram_errors_map_to_the_taxonomy(telethon_error, expected, rpc):
    if telethon_error is errors.TimedOutError:
        raised = telethon_error(request=None, message="Timeout", code=-503)  # how Telethon builds it
    else:
        raised = telethon_error(request=None)

    mapped = map_error(raised)

    assert type(mapped) is expected
    assert mapped.rpc == rpc
    # What a person reads is the taxonomy's message, never Telethon's text ("... (caused by SignInRequest)").
    assert str(mapped) == (OPERATOR_WORDS.get(rpc) or expected.__doc__.rstrip("."))
    assert "caused by" not in str(mapped)


def test_an_unknown_telegram_error_keeps_its_name_and_is_not_retried():
    mapped = map_error(errors.BadRequestError(request=None, message="SOMETHING_NEW", code=400))

    assert type(mapped) is TelegramError
    assert mapped.rpc == "SOMETHING_NEW"
    assert str(mapped) == "Telegram refused the request (SOMETHING_NEW)"


@pytest.mark.parametrize(
    ("telethon_error", "expected"),
    [
        (errors.UnauthorizedError(request=None, message="AUTH_SOMETHING_NEW", code=401), AuthRequired),
        (errors.ForbiddenError(request=None, message="CHAT_SEND_SOMETHING_FORBIDDEN", code=403), TargetForbidden),
        (errors.ServerError(request=None, message="NO_WORKERS_RUNNING", code=-500), TransientError),
        (errors.FloodError(request=None, message="FLOOD", code=420), TransientError),
    ],
)
def test_unknown_errors_of_a_known_family(telethon_error, expected):
    assert type(map_error(telethon_error)) is expected


@pytest.mark.parametrize(
    ("trouble", "expected"),
    [
        (ConnectionError("Cannot send requests while disconnected"), TransientError),
        (TimeoutError(), TransientError),  # asyncio.TimeoutError is this class
        (errors.InvalidBufferError(struct.pack("<i", -429)), TransientError),  # transport flood
        (errors.AuthKeyNotFound(), AuthRequired),
    ],
)
def test_network_and_session_trouble(trouble, expected):
    assert type(map_error(trouble)) is expected


@pytest.mark.parametrize("other", [ValueError("bad argument"), FileNotFoundError("staging/a.zip")])
def test_errors_that_are_not_telegrams_pass_through(other):
    with pytest.raises(type(other)), mapped_errors():
        raise other


def test_mapped_errors_chains_the_telethon_error():
    flood = errors.FloodWaitError(request=None, capture=5)

    with pytest.raises(FloodWait) as raised, mapped_errors():
        raise flood

    assert raised.value.__cause__ is flood


def test_maps_errors_decorates_a_coroutine_method():
    class Gateway:
        @maps_errors
        async def send(self, value):
            if value is None:
                raise errors.PeerFloodError(request=None)
            return value

    assert asyncio.run(Gateway().send(3)) == 3
    with pytest.raises(AccountRestricted):
        asyncio.run(Gateway().send(None))
