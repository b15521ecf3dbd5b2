"""The bot open to members of chosen chats: the bot asks Telegram (channels.getParticipant, through the real
Telethon client and the sandbox server) whether a person who writes is in one of them, keeps the answer for
BOT_MEMBERSHIP_SECONDS, and refuses in words the people who are not."""

import asyncio

import pytest

from accounts.models import AccountChat, Chat
from packages.bot.services import bot_settings_get, bot_settings_update
from packages.models import BotActivity, BotPerson
from telegram.sandbox import bots
from tests.support import factories
from tests.support.bots import bot_messages, until, with_bot

TOKEN = "7000001:TEST"
BOT = "@stash_bot"
DANA, EVAN = 7001, 7002
CLUB, LOUNGE = 3101, 3102  # a channel the bot administers; a supergroup the bot is not in
WORLD = {
    "accounts": [{"phone": "+15550000001"}],
    "bots": [{"id": 7000001, "username": "stash_bot", "token": TOKEN, "admin_of": [CLUB]}],
    "chats": [
        {"id": CLUB, "title": "Print Club", "type": "channel", "admins": ["+15550000001"], "people": [DANA]},
        {"id": LOUNGE, "title": "Lounge", "type": "supergroup", "members": ["+15550000001"], "people": [EVAN]},
        {"id": DANA, "title": "Dana", "type": "user"},
        {"id": EVAN, "title": "Evan", "type": "user"},
    ],
}

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def members_world(sandbox):
    """The bot on, for members of the Print Club (the accounts' channel the bot administers)."""
    world = sandbox(WORLD)
    account = factories.account("+15550000001")
    club = Chat.objects.create(telegram_id=CLUB, title="Print Club", type="channel")
    lounge = Chat.objects.create(telegram_id=LOUNGE, title="Lounge", type="supergroup")
    for chat in (club, lounge):
        AccountChat.objects.create(account=account, chat=chat)
    bot_settings_update(
        enabled=True, token=TOKEN, audience="members", allowed_user_ids=[], sends_per_day=5, member_chats=[club]
    )
    return world


def say(world, text: str, user_id: int) -> None:
    bots.person_says(world, user_id=user_id, username=BOT, text=text)


def test_a_member_is_let_in_and_a_stranger_refused_in_words(members_world):
    async def scenario():
        say(members_world, "/start", DANA)
        say(members_world, "/start", EVAN)
        return await until(lambda: bot_messages(members_world, DANA)), await until(
            lambda: bot_messages(members_world, EVAN)
        )

    (dana,), (evan,) = with_bot(scenario, TOKEN)
    assert "/search" in dana["text"]
    assert evan["text"] == "This bot is for members of Print Club. Join one of them, then write again."
    assert BotPerson.objects.get(user_id=DANA).member_of == "Print Club"
    assert BotPerson.objects.get(user_id=EVAN).member_of == ""


def test_a_person_who_left_is_refused_once_the_answer_kept_expires(members_world, settings):
    settings.BOT_MEMBERSHIP_SECONDS = 2

    async def scenario():
        say(members_world, "/start", DANA)
        await until(lambda: bot_messages(members_world, DANA))
        bots.person_leaves(members_world, chat_id=CLUB, user_id=DANA)
        say(members_world, "/latest", DANA)  # within the answer kept: still let in
        kept = (await until(lambda: bot_messages(members_world, DANA)[1:]))[0]
        await asyncio.sleep(2.2)
        say(members_world, "/latest", DANA)
        expired = (await until(lambda: bot_messages(members_world, DANA)[2:]))[0]
        return kept, expired

    kept, expired = with_bot(scenario, TOKEN)
    assert kept["text"] == "The archive has no packages yet."
    assert expired["text"] == "This bot is for members of Print Club. Join one of them, then write again."


def test_a_chat_the_bot_cannot_ask_about_is_said_on_the_page_and_nobody_let_in_by_it(members_world):
    bot_settings_update(
        enabled=True,
        token=None,
        audience="members",
        allowed_user_ids=[],
        sends_per_day=5,
        member_chats=list(Chat.objects.filter(telegram_id=LOUNGE)),
    )

    async def scenario():
        say(members_world, "/start", EVAN)
        return await until(lambda: bot_messages(members_world, EVAN))

    (evan,) = with_bot(scenario, TOKEN)
    assert evan["text"] == "This bot is for members of Lounge. Join one of them, then write again."
    check = BotActivity.objects.get(kind="check")
    assert check.text.startswith("could not check members of Lounge (make the bot an admin of it)")
    assert BotPerson.objects.get(user_id=EVAN).member_checked_at is None  # asked again at the next message


def test_choosing_other_chats_asks_everyone_again(members_world):
    BotPerson.objects.create(user_id=DANA, member_of="Print Club", member_checked_at="2026-01-01T00:00:00Z")
    bot = bot_settings_get()
    bot_settings_update(
        enabled=True, token=None, audience="members", allowed_user_ids=[], sends_per_day=5, member_chats=[]
    )
    assert list(bot.member_chats.all()) == []
    assert BotPerson.objects.get(user_id=DANA).member_checked_at is None
