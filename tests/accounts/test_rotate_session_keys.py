"""Key rotation: `manage.py rotate_session_keys` re-encrypts every session with the newest key."""

import io

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command

from accounts import services
from accounts.models import AuthState, TelegramAccount
from core.crypto import SealBroken, seal, unseal
from tests.support.accounts import PREMIUM, READER

pytestmark = pytest.mark.django_db

KEY_A = Fernet.generate_key().decode()
KEY_B = Fernet.generate_key().decode()


def log_in(phone: str, code: str) -> TelegramAccount:
    account = services.account_add(phone=phone)
    return services.account_sign_in(account=account, code=code)


def rotate() -> str:
    out = io.StringIO()
    call_command("rotate_session_keys", stdout=out)
    return out.getvalue()


def test_rotation_end_to_end_old_key_still_opens_until_removed(world, settings):
    settings.SESSION_ENCRYPTION_KEYS = [KEY_A]
    reader, premium = log_in(READER, "12345"), log_in(PREMIUM, "22222")
    TelegramAccount.objects.create(phone="+15550000077")  # added, never logged in: no session
    sessions = {account.phone: unseal(account.session_sealed) for account in (reader, premium)}
    sealed_with_a = dict(TelegramAccount.objects.values_list("phone", "session_sealed"))

    # Step 1: the new key goes first; the old one still opens what it sealed.
    settings.SESSION_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    assert unseal(sealed_with_a[READER]) == sessions[READER]

    # Step 2: re-encrypt.
    output = rotate()
    assert "Re-encrypted 2 session(s) with the newest key (2 had been sealed with an older one)" in output
    assert "1 account(s) have no session" in output
    assert "the 1 older key(s) can be removed" in output

    # Step 3: the old key is removed; every session still opens, and works against Telegram.
    settings.SESSION_ENCRYPTION_KEYS = [KEY_B]
    for account in TelegramAccount.objects.exclude(session_sealed=""):
        assert account.session_sealed != sealed_with_a[account.phone]
        assert unseal(account.session_sealed) == sessions[account.phone]
    assert services.account_refresh_chats(account=TelegramAccount.objects.get(phone=READER)).chats == 3
    with pytest.raises(SealBroken):
        unseal(sealed_with_a[READER])


def test_a_second_rotation_finds_nothing_older(world, settings):
    settings.SESSION_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    log_in(READER, "12345")
    assert "(0 had been sealed with an older one)" in rotate()


def test_a_session_no_key_opens_refuses_the_rotation_and_changes_nothing(world, settings):
    settings.SESSION_ENCRYPTION_KEYS = [KEY_A]
    log_in(READER, "12345")
    lost_key = Fernet.generate_key().decode()
    settings.SESSION_ENCRYPTION_KEYS = [lost_key]
    TelegramAccount.objects.create(
        phone="+15550000088", session_sealed=seal("orphan session"), auth_state=AuthState.AUTHENTICATED
    )
    settings.SESSION_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    before = dict(TelegramAccount.objects.values_list("phone", "session_sealed"))

    with pytest.raises(CommandError) as refused:
        rotate()

    message = str(refused.value)
    assert "1 session(s) open with none of the keys in STASHCAST_SESSION_KEYS: +15550000088" in message
    assert "Nothing was re-encrypted" in message
    assert dict(TelegramAccount.objects.values_list("phone", "session_sealed")) == before


def test_without_keys_the_command_says_how_to_configure_them(settings):
    settings.SESSION_ENCRYPTION_KEYS = []
    TelegramAccount.objects.create(phone="+15550000099", session_sealed="gAAAA-anything")
    with pytest.raises(CommandError, match="STASHCAST_SESSION_KEYS is empty"):
        rotate()
