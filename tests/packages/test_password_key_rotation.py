"""Key rotation reaches archive passwords: `manage.py rotate_session_keys` re-seals the channels' passwords and
those that opened packages with the newest key, with the sessions, all or nothing."""

import io

import pytest
from cryptography.fernet import Fernet
from django.core.management import CommandError, call_command

from accounts.models import Chat
from core.crypto import seal, unseal
from packages.models import BotSettings, ChannelPassword, Package, PasswordSource
from packages.services import channel_password_add

pytestmark = pytest.mark.django_db

KEY_A, KEY_B, KEY_C = (Fernet.generate_key().decode() for _ in range(3))


def _rotate() -> str:
    out = io.StringIO()
    call_command("rotate_session_keys", stdout=out)
    return out.getvalue()


@pytest.fixture
def sealed_with_a(settings):
    settings.SESSION_ENCRYPTION_KEYS = [KEY_A]
    chat = Chat.objects.create(telegram_id=1001, title="Models A", type="channel")
    channel_password_add(chat_id=chat.pk, password="Dragon-Key-77")
    Package.objects.create(
        content_hash="a" * 64,
        file_name="dragon.7z",
        file_size=1,
        archive_type="7z",
        password_sealed=seal("hunter2"),
        password_source=PasswordSource.CAPTION,
    )
    return chat


def test_passwords_open_with_the_newest_key_alone_after_a_rotation(settings, sealed_with_a):
    settings.SESSION_ENCRYPTION_KEYS = [KEY_B, KEY_A]

    said = _rotate()

    assert "Re-encrypted 2 archive password(s)." in said
    settings.SESSION_ENCRYPTION_KEYS = [KEY_B]
    assert unseal(ChannelPassword.objects.get().password_sealed) == "Dragon-Key-77"
    assert unseal(Package.objects.get().password_sealed) == "hunter2"


def test_a_password_no_key_opens_stops_the_rotation_and_changes_nothing(settings, sealed_with_a):
    settings.SESSION_ENCRYPTION_KEYS = [KEY_C]
    ChannelPassword.objects.create(chat=sealed_with_a, password_sealed=seal("sealed-with-c"), hint="s•••c (13)")
    settings.SESSION_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    before = sorted(ChannelPassword.objects.values_list("password_sealed", flat=True))

    with pytest.raises(CommandError, match="1 archive password\\(s\\) open with none of the keys"):
        _rotate()

    assert sorted(ChannelPassword.objects.values_list("password_sealed", flat=True)) == before


def test_the_bots_token_and_session_open_with_the_newest_key_alone_after_a_rotation(settings):
    settings.SESSION_ENCRYPTION_KEYS = [KEY_A]
    BotSettings.objects.create(pk=1, token_sealed=seal("7000001:TOKEN"), session_sealed=seal("1Bsession"))
    settings.SESSION_ENCRYPTION_KEYS = [KEY_B, KEY_A]

    said = _rotate()

    assert "Re-encrypted 2 of the bot's secrets" in said
    settings.SESSION_ENCRYPTION_KEYS = [KEY_B]
    bot = BotSettings.objects.get()
    assert (unseal(bot.token_sealed), unseal(bot.session_sealed)) == ("7000001:TOKEN", "1Bsession")


def test_a_bot_token_no_key_opens_stops_the_rotation_and_changes_nothing(settings, sealed_with_a):
    settings.SESSION_ENCRYPTION_KEYS = [KEY_C]
    BotSettings.objects.create(pk=1, token_sealed=seal("7000001:TOKEN"))
    settings.SESSION_ENCRYPTION_KEYS = [KEY_B, KEY_A]
    before = ChannelPassword.objects.get().password_sealed

    with pytest.raises(CommandError, match="The bot's token opens with none of the keys"):
        _rotate()

    assert ChannelPassword.objects.get().password_sealed == before, "the passwords were left as they were"
