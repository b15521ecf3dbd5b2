"""Subscription notices go only to people the bot's current rules let in (the audience — an allow-list, members of
chosen chats — and blocks), checked when the notice is sent; anyone may always /unsubscribe, list their
subscriptions or /stop, even when refused everything else. The real Telethon bot against the sandbox."""

import asyncio

import pytest
from django.utils import timezone

from accounts.models import AccountChat, Chat
from core.db_thread import in_db_thread
from packages.bot.services import bot_settings_update
from packages.models import BotNotice, BotPerson, BotSettings, BotSubscription, Package
from packages.services.search import package_search_words_update
from telegram.sandbox import bots
from tests.support import factories
from tests.support.bots import bot_messages, until, with_bot

TOKEN = "7000001:TEST"
BOT = "@stash_bot"
DANA, EVAN = 7001, 7002
ARCHIVE = 3001
WORLD = {
    "accounts": [{"phone": "+15550000001"}],
    "bots": [{"id": 7000001, "username": "stash_bot", "token": TOKEN, "admin_of": [ARCHIVE]}],
    "chats": [
        {
            "id": ARCHIVE,
            "title": "Archive",
            "type": "channel",
            "role": "destination",
            "admins": ["+15550000001"],
            "people": [DANA, EVAN],
            "messages": [{"id": 30, "text": "dragon-lair.zip", "document": {"name": "dragon-lair.zip", "size": 9}}],
        },
        {"id": DANA, "title": "Dana", "type": "user"},
        {"id": EVAN, "title": "Evan", "type": "user"},
    ],
}

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def world(sandbox, settings):
    """The bot on for everyone; Dana and Evan (both in the archive channel) subscribed to "lair"."""
    settings.BOT_NOTICE_SECONDS = 0.2
    settings.BOT_PERSON_SECONDS_BETWEEN_SENDS = 0
    world = sandbox(WORLD)
    archive = Chat.objects.create(telegram_id=ARCHIVE, title="Archive", type="channel")
    AccountChat.objects.create(account=factories.account("+15550000001"), chat=archive)
    bot_settings_update(enabled=True, token=TOKEN, audience="everyone", allowed_user_ids=[], sends_per_day=5)
    for user_id in (DANA, EVAN):
        say(world, "/start", user_id)  # a bot writes only to people who wrote first
        person = BotPerson.objects.create(user_id=user_id, last_message_id=1)
        BotSubscription.objects.create(person=person, words="lair")
    return world


def say(world, text: str, user_id: int) -> None:
    bots.person_says(world, user_id=user_id, username=BOT, text=text)


def lands() -> None:
    package = Package.objects.create(
        content_hash="f" * 64,
        file_name="dragon-lair.zip",
        file_size=9,
        archive_type="zip",
        destination_chat=Chat.objects.get(telegram_id=ARCHIVE),
        dest_message_ids=[30],
    )
    package_search_words_update(package=package)


def told(world, user_id: int) -> list[dict]:
    return [m for m in bot_messages(world, user_id) if "new package" in m["text"]]


def test_someone_off_the_allow_list_is_no_longer_told_of_new_packages(world):
    BotSettings.objects.filter(pk=1).update(audience="allow_list", allowed_user_ids=[EVAN])

    async def scenario():
        await in_db_thread(lands)()
        await until(lambda: told(world, EVAN))
        await asyncio.sleep(0.6)  # a few more rounds

    with_bot(scenario, TOKEN)
    assert told(world, DANA) == [], "Dana is no longer allowed: not a word about the archive"
    assert [n.subscription.person.user_id for n in BotNotice.objects.select_related("subscription__person")] == [EVAN]


def test_a_blocked_person_is_not_told(world):
    BotPerson.objects.filter(user_id=DANA).update(blocked=True)

    async def scenario():
        await in_db_thread(lands)()
        await until(lambda: told(world, EVAN))
        await asyncio.sleep(0.6)

    with_bot(scenario, TOKEN)
    assert told(world, DANA) == []


def test_membership_is_asked_again_before_a_notice_and_one_who_left_is_not_told(world, settings):
    """The bot is for members of the archive channel; Dana's last answer (a member) is stale and she has left since:
    the bot asks Telegram at notice time and says nothing to her."""
    settings.BOT_MEMBERSHIP_SECONDS = 60
    archive = Chat.objects.get(telegram_id=ARCHIVE)
    bot_settings_update(
        enabled=True, token=None, audience="members", allowed_user_ids=[], sends_per_day=5, member_chats=[archive]
    )
    stale = timezone.now() - timezone.timedelta(hours=1)
    BotPerson.objects.update(member_of="Archive", member_checked_at=stale)
    bots.person_leaves(world, chat_id=ARCHIVE, user_id=DANA)

    async def scenario():
        await in_db_thread(lands)()
        await until(lambda: told(world, EVAN))
        await asyncio.sleep(0.6)

    with_bot(scenario, TOKEN)
    assert told(world, DANA) == []
    assert dict(BotPerson.objects.values_list("user_id", "member_of")) == {DANA: "", EVAN: "Archive"}


def test_a_refused_person_may_still_list_unsubscribe_and_stop(world):
    BotSettings.objects.filter(pk=1).update(audience="allow_list", allowed_user_ids=[])
    BotSubscription.objects.create(person=BotPerson.objects.get(user_id=DANA), words="dragon bust")
    BotPerson.objects.filter(user_id=EVAN).update(blocked=True)

    async def scenario():
        for text, user_id in (
            ("/subscriptions", DANA),
            ("/unsubscribe lair", DANA),
            ("/latest", DANA),
            ("/stop", EVAN),
        ):
            count = len(bot_messages(world, user_id))
            say(world, text, user_id)
            await until(lambda: len(bot_messages(world, user_id)) > count)  # noqa: B023 (awaited here)

    with_bot(scenario, TOKEN)
    dana = [m["text"] for m in bot_messages(world, DANA)]
    assert dana == [
        "You are subscribed to:\n• lair\n• dragon bust",
        "Unsubscribed from “lair”.",
        f"This bot is for the archive's members. Ask an operator to add you (your id is {DANA}).",
    ]
    assert [m["text"] for m in bot_messages(world, EVAN)] == [
        "Stopped: you have no subscriptions now, and the bot writes to you only when you write to it."
    ]
    assert list(BotSubscription.objects.values_list("person__user_id", "words")) == [(DANA, "dragon bust")]
