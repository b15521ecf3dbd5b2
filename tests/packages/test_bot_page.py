"""The Bot page: operators turn the bot on, set its token (sealed, never shown back), who may use it and the
daily limit, and block people; viewers read it; the console lists the bot's people, subscriptions and sends."""

import re

import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.models import AccountChat, AuthState, Chat, TelegramAccount
from core.crypto import seal, unseal
from packages.models import BotActivity, BotDelivery, BotPerson, BotSettings, BotSubscription, Package
from telegram.sandbox.world import chat_access_hash

pytestmark = pytest.mark.django_db
TOKEN = "7000001:AAEsecret"


def settings_form(**changes) -> dict:
    return {
        "enabled": "on",
        "token": TOKEN,
        "audience": "allow_list",
        "allowed": "7001, 7002",
        "sends_per_day": "5",
    } | changes


def test_an_operator_turns_the_bot_on_with_a_token_kept_sealed(operator):
    response = operator.post(reverse("bot:settings"), settings_form())
    assert response.status_code == 302
    bot = BotSettings.objects.get()
    assert (bot.enabled, bot.audience, bot.allowed_user_ids, bot.sends_per_day) == (True, "allow_list", [7001, 7002], 5)
    assert unseal(bot.token_sealed) == TOKEN
    page = operator.get(reverse("bot:page")).content.decode()
    assert TOKEN not in page and "AAEsecret" not in page
    assert "Set (from the console)" in page

    operator.post(reverse("bot:settings"), settings_form(token="", enabled=""))
    bot.refresh_from_db()
    assert unseal(bot.token_sealed) == TOKEN, "an empty token field keeps the stored one"
    assert bot.enabled is False


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("token", "not-a-token", "A bot token looks like"),
        ("allowed", "7001 dana", "“dana” is no Telegram user id"),
        ("sends_per_day", "-1", "greater than or equal to 0"),
        ("audience", "members", "Choose at least one chat whose members may use the bot."),
    ],
)
def test_bad_settings_are_answered_on_the_page(operator, field, value, message):
    response = operator.post(reverse("bot:settings"), settings_form(**{field: value}))
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not BotSettings.objects.filter(enabled=True).exists()


def test_an_operator_opens_the_bot_to_members_of_the_accounts_chats(operator):
    account = TelegramAccount.objects.create(phone="+15550000001", auth_state=AuthState.AUTHENTICATED)
    club = Chat.objects.create(telegram_id=3101, title="Print Club", type="channel")
    Chat.objects.create(telegram_id=3102, title="Nobody's", type="channel")  # no account in it: not offered
    AccountChat.objects.create(account=account, chat=club)
    page = operator.get(reverse("bot:page")).content.decode()
    assert "Print Club" in page and "Nobody's" not in page

    response = operator.post(reverse("bot:settings"), settings_form(audience="members", member_chats=[club.pk]))
    assert response.status_code == 302
    bot = BotSettings.objects.get()
    assert (bot.audience, list(bot.member_chats.all())) == ("members", [club])
    assert "selected>Print Club</option>" in operator.get(reverse("bot:page")).content.decode()


def test_for_members_of_chosen_chats_the_page_says_which_chat_each_person_is_in(operator):
    club = Chat.objects.create(telegram_id=3101, title="Print Club", type="channel")
    BotSettings.objects.create(pk=1, enabled=True, audience="members").member_chats.set([club])
    now = timezone.now()
    BotPerson.objects.create(user_id=7001, first_name="Dana", member_of="Print Club", member_checked_at=now)
    BotPerson.objects.create(user_id=7002, first_name="Finn", member_checked_at=now)
    BotPerson.objects.create(user_id=7003, first_name="Gus")
    rows = {
        cells[0]: cells[3]
        for cells in (
            [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
            for row in re.findall(r"<tr>(.*?)</tr>", operator.get(reverse("bot:page")).content.decode(), re.S)
        )
        if cells
    }
    assert rows == {
        "Dana": "Print Club",
        "Finn": "None of the chosen chats",
        "Gus": "Asked at their next message",
    }

    BotSettings.objects.filter(pk=1).update(audience="everyone")
    assert "Member of" not in operator.get(reverse("bot:page")).content.decode()


def test_the_page_lists_people_subscriptions_sends_and_activity_and_blocks(operator):
    dana = BotPerson.objects.create(user_id=7001, first_name="Dana", username="dana_prints")
    package = Package.objects.create(content_hash="a" * 64, file_name="dragon.zip", file_size=10, archive_type="zip")
    BotDelivery.objects.create(person=dana, package=package, state="sent")
    BotSubscription.objects.create(person=dana, words="dragon bust")
    BotActivity.objects.create(person=dana, kind="command", text="/latest")
    page = operator.get(reverse("bot:page")).content.decode()
    for shown in ("@dana_prints", "7001", "dragon bust", "dragon.zip", ">command</span>", "/latest"):
        assert shown in page

    operator.post(reverse("bot:person-block", args=[7001]), {"blocked": "1"})
    assert BotPerson.objects.get().blocked is True
    operator.post(reverse("bot:person-block", args=[7001]), {"blocked": "0"})
    assert BotPerson.objects.get().blocked is False


def test_a_viewer_reads_the_page_and_changes_nothing(client, django_user_model):
    client.force_login(django_user_model.objects.create_user(username="viewer", password="s3cret-pass"))
    BotSettings.objects.create(pk=1, audience="allow_list", allowed_user_ids=[7001])
    page = client.get(reverse("bot:page"))
    assert page.status_code == 200
    text = page.content.decode()
    assert "People on the allow-list: 7001" in text and 'name="token"' not in text
    assert client.post(reverse("bot:settings"), settings_form()).status_code == 403
    assert BotSettings.objects.get().enabled is False


def test_an_operator_makes_the_bot_an_admin_of_the_archive_channel_by_an_account_there(operator, sandbox):
    phone = "+15550000001"
    world = sandbox(
        {
            "accounts": [{"phone": phone}],
            "bots": [{"id": 7000001, "username": "stash_bot", "token": "7000001:TEST"}],
            "chats": [{"id": 3001, "title": "Archive", "type": "channel", "admins": [phone]}],
        }
    )
    account = TelegramAccount.objects.create(
        phone=phone, auth_state=AuthState.AUTHENTICATED, session_sealed=seal(world.session_issue(phone))
    )
    chat = Chat.objects.create(telegram_id=3001, title="Archive", type="channel")
    AccountChat.objects.create(
        account=account,
        chat=chat,
        can_post=True,
        access_hash=chat_access_hash(phone=phone, chat_id=3001, type="channel"),
    )
    BotSettings.objects.create(pk=1)

    refused = operator.post(reverse("bot:make-admin"), {"chat": chat.pk})
    assert refused.status_code == 400
    assert "Turn the bot on first" in refused.content.decode()

    BotSettings.objects.filter(pk=1).update(username="stash_bot")
    response = operator.post(reverse("bot:make-admin"), {"chat": chat.pk}, follow=True)
    assert "@stash_bot is now an admin of Archive" in response.content.decode()
    assert world.membership(3001, "bot:7000001") == "admin"


def test_the_demo_bots_commands_show_only_for_the_demo_bot(operator):
    """On the sandbox with the demo world's token (as `make run` connects it), the page says how to talk to it, by
    commands that run as written from a fresh clone; another bot's page does not."""
    BotSettings.objects.create(pk=1, audience="members", token_sealed=seal("7000001:DEMO"))
    page = operator.get(reverse("bot:page")).content.decode()
    assert "Try the demo bot" in page
    assert "make manage ARGS=&#x27;sandbox_say 7001 @stash_bot &quot;/search dragon&quot;&#x27;" in page
    assert "make manage ARGS=&#x27;sandbox_say 7002 @stash_bot /start&#x27;" in page
    BotSettings.objects.filter(pk=1).update(token_sealed=seal(TOKEN))
    assert "Try the demo bot" not in operator.get(reverse("bot:page")).content.decode()
