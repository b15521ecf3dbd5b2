"""The bot keeps its session (sealed) and its update state: a restart resumes without logging in again and
catches up, through updates.getDifference on the sandbox server, with what people wrote while it was down;
a message caught up again after a crash (its state not kept) is not answered twice."""

import asyncio

import pytest

from core.crypto import unseal
from packages.bot.commands import HELP
from packages.bot.services import bot_message_claim, bot_session_get, bot_settings_update
from packages.models import BotPerson, BotSettings
from telegram.sandbox import bots
from tests.support.bots import bot_messages, until, with_bot

TOKEN = "7000001:TEST"
BOT = "@stash_bot"
DANA = 7001
WORLD = {
    "accounts": [{"phone": "+15550000001"}],
    "bots": [{"id": 7000001, "username": "stash_bot", "token": TOKEN}],
    "chats": [{"id": DANA, "title": "Dana", "type": "user"}],
}
EMPTY = "The archive has no packages yet."

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def world(sandbox, settings):
    settings.BOT_PERSON_SECONDS_BETWEEN_SENDS = 0
    BotSettings.objects.create(pk=1, enabled=True, audience="everyone")
    return sandbox(WORLD)


def say(world, text: str) -> None:
    bots.person_says(world, user_id=DANA, username=BOT, text=text)


def answered(world, count: int, *, first: str = ""):
    """Run the bot (Dana writes `first` once it runs) until Dana has `count` answers, and a while after (time for
    any answered twice)."""

    async def scenario():
        if first:
            say(world, first)
        await until(lambda: len(bot_messages(world, DANA)) >= count)
        await asyncio.sleep(1)
        return [m["text"] for m in bot_messages(world, DANA)]

    return with_bot(scenario, TOKEN)


def test_what_a_person_wrote_while_the_bot_was_down_is_answered_once_after_it_starts(world):
    assert answered(world, 1, first="/start") == [HELP]
    kept = BotSettings.objects.get()
    assert unseal(kept.session_sealed) and kept.session_bot_id == 7000001
    assert kept.update_state["pts"] == bots.pts(world, 7000001)

    say(world, "/latest")  # the bot process is down
    world.stats_reset()
    assert answered(world, 2) == [HELP, EMPTY]
    calls = world.stats()["calls"]
    assert calls["bot:7000001"]["updates.getDifference"] >= 1
    assert not any("auth.importBotAuthorization" in methods for methods in calls.values()), "no login again"


def test_a_message_caught_up_again_after_a_crash_is_not_answered_twice(world):
    async def scenario():
        say(world, "/start")
        await until(lambda: bot_messages(world, DANA))
        say(world, "/latest")
        await until(lambda: bot_messages(world, DANA)[1:])

    with_bot(scenario, TOKEN)
    # A crash after the state of the first answer was kept: /latest comes back with what was missed.
    BotSettings.objects.update(update_state={**BotSettings.objects.get().update_state, "pts": 2})
    say(world, "/start")
    assert answered(world, 3) == [HELP, EMPTY, HELP]


def test_a_persons_message_is_taken_up_once():
    BotPerson.objects.create(user_id=DANA)
    assert bot_message_claim(user_id=DANA, message_id=3)
    assert not bot_message_claim(user_id=DANA, message_id=3), "caught up again"
    assert not bot_message_claim(user_id=DANA, message_id=2), "older than one taken up"
    assert bot_message_claim(user_id=DANA, message_id=4)


def test_a_new_token_forgets_the_kept_session(world):
    answered(world, 1, first="/start")
    bot_settings_update(enabled=True, token="7000002:OTHER", audience="everyone", allowed_user_ids=[], sends_per_day=5)
    assert BotSettings.objects.get().session_sealed == ""
    assert bot_session_get(token="7000002:OTHER").session == ""
