"""The members' bot, end to end: a person writes to the bot in the sandbox world, the bot process (the real
Telethon client logged in with the bot's token) answers from the catalog and sends packages by copying the
archive channel's documents; its rules (who may use it, a daily limit, one send per person and package) and
subscriptions told once."""

import asyncio
import io
import json
import re
import shlex
import signal
import subprocess
from datetime import datetime

import pytest
from django.core.files.base import ContentFile
from django.core.management import CommandError, call_command
from django.utils import timezone

from accounts.models import Chat
from core.db_thread import in_db_thread
from core.sizes import size_text
from packages.bot.runner import Pacer
from packages.bot.services import bot_search, bot_settings_update
from packages.models import (
    BotDelivery,
    BotDeliveryState,
    BotNotice,
    BotPerson,
    BotSettings,
    Collection,
    GroupingRule,
    Package,
    PackagePreview,
)
from packages.selectors import package_search
from packages.services.search import package_search_words_update
from telegram.sandbox import bots
from telegram.sandbox.content import picture
from tests.support.bots import until
from tests.support.bots import with_bot as run_bot
from tests.support.processes import start_program, wait_for

TOKEN = "7000001:TEST"
BOT = "@stash_bot"
DANA, EVAN = 7001, 7002
FINN = 7002  # the demo world's person in none of its chats
ARCHIVE = 3001
NAMES = {30: "dragon.zip", 31: "dragon-bust.zip", 32: "tower.7z", 33: "goblin.zip", 34: "dragon-lair.zip"}
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
            "messages": [
                {"id": mid, "text": f"{name} #sc{mid}", "document": {"name": name, "size": 1000 + mid}}
                for mid, name in NAMES.items()
            ],
        },
        {"id": DANA, "title": "Dana", "type": "user", "username": "dana_prints"},
        {"id": EVAN, "title": "Evan", "type": "user"},
    ],
}


@pytest.fixture
def archive(sandbox, settings):
    """The world with the bot, the catalog's packages in its archive channel (all but the last), the bot on."""
    settings.BOT_NOTICE_SECONDS = 0.2
    settings.BOT_PERSON_SECONDS_BETWEEN_SENDS = 0
    world = sandbox(WORLD)
    chat = Chat.objects.create(telegram_id=ARCHIVE, title="Archive", type="channel")
    collection = Collection.objects.create(name="Dragons", rule=GroupingRule.OPERATOR)
    for mid, name in list(NAMES.items())[:-1]:
        package = Package.objects.create(
            content_hash=f"{mid:064d}",
            file_name=name,
            file_size=1000 + mid,
            archive_type=name.rsplit(".", 1)[1],
            file_count=3,
            destination_chat=chat,
            dest_message_ids=[mid],
            collection=collection if name.startswith("dragon") else None,
            source_posted_at=timezone.now() + timezone.timedelta(seconds=mid),
        )
        package_search_words_update(package=package)
    BotSettings.objects.create(pk=1, enabled=True, audience="everyone", sends_per_day=20)
    return world


def conversation(world, user_id: int = DANA) -> list[dict]:
    found = bots.conversations(world, user_id)
    return found[0]["messages"] if found else []


def from_bot(world, user_id: int = DANA) -> list[dict]:
    return [m for m in conversation(world, user_id) if m["from"] == "bot"]


def with_bot(scenario, token: str = TOKEN):
    return run_bot(scenario, token)


def say(world, text: str, user_id: int = DANA) -> int:
    return bots.person_says(world, user_id=user_id, username=BOT, text=text)


def press(world, message_id: int, button: str, user_id: int = DANA) -> int:
    return bots.person_presses(world, user_id=user_id, username=BOT, message_id=message_id, button=button)


pytestmark = pytest.mark.django_db(transaction=True)


def test_start_says_what_the_bot_does(archive):
    async def scenario():
        say(archive, "/start")
        return await until(lambda: from_bot(archive))

    (answer,) = with_bot(scenario)
    assert "/search" in answer["text"] and "/subscribe" in answer["text"]
    assert BotPerson.objects.get(user_id=DANA).first_name == "Dana"


def test_search_answers_with_the_consoles_ranking_paged_by_buttons(archive):
    for n in range(5):  # seven dragons: two pages of five
        package = Package.objects.create(
            content_hash=f"{900 + n:064d}",
            file_name=f"dragon-{n}.stl.zip",
            file_size=10,
            archive_type="zip",
            destination_chat=Chat.objects.get(telegram_id=ARCHIVE),
            dest_message_ids=[30],
        )
        package_search_words_update(package=package)

    async def scenario():
        say(archive, "/search dragon")
        (page,) = await until(lambda: from_bot(archive))
        press(archive, page["id"], "Next ›")
        await until(lambda: "page 2" in from_bot(archive)[0]["text"])
        return page, from_bot(archive)[0]

    first, second = with_bot(scenario)
    assert first["text"] == "7 packages match “dragon” (page 1 of 2). Pick one:"
    newest = [p.file_name for p in Package.objects.filter(file_name__contains="dragon").order_by("-created_at", "-pk")]
    assert [row[0].split(" · ")[0] for row in first["buttons"][:5]] == newest[:5]
    assert first["buttons"][5] == ["Next ›"]
    assert [row[0].split(" · ")[0] for row in second["buttons"][:2]] == newest[5:]
    assert second["buttons"][2] == ["‹ Previous"], "the same message, edited in place"


def test_search_reads_only_the_page_it_shows_in_the_consoles_order(archive, django_assert_max_num_queries):
    ranked = list(package_search(query="dragon").exclude(dest_message_ids=[]))
    with django_assert_max_num_queries(3):  # the page (and one more), its matched files, the count
        found = bot_search(words="dragon", offset=1, limit=1)
    assert (found.packages, found.more, found.total) == (ranked[1:2], len(ranked) > 2, len(ranked))
    assert bot_search(words="dragon", offset=9, limit=5).packages == []


def test_search_past_the_counted_matches_says_more_than(archive, monkeypatch):
    monkeypatch.setattr("packages.bot.services.SEARCH_COUNTED", 1)  # two dragons in the archive channel

    async def scenario():
        say(archive, "/search dragon")
        return await until(lambda: from_bot(archive))

    (answer,) = with_bot(scenario)
    assert answer["text"] == "More than 1 packages match “dragon” (page 1). Pick one:"
    assert [row[0].split(" · ")[0] for row in answer["buttons"]] == ["dragon-bust.zip", "dragon.zip"]


def test_latest_lists_the_newest_packages(archive):
    async def scenario():
        say(archive, "/latest")
        return await until(lambda: from_bot(archive))

    (answer,) = with_bot(scenario)
    assert [row[0].split(" · ")[0] for row in answer["buttons"]] == [
        "goblin.zip",
        "tower.7z",
        "dragon-bust.zip",
        "dragon.zip",
    ]


def test_a_card_sends_the_package_once_however_often_it_is_pressed(archive, storage):
    dragon = Package.objects.get(file_name="dragon.zip")
    dragon.preview = PackagePreview.objects.create(
        package=dragon,
        source="photo",
        image=ContentFile(picture(seed="dragon"), name="dragon.jpg"),
        width=640,
        height=480,
    )
    dragon.caption = "Red dragon, 75 mm"
    dragon.save(update_fields=["preview", "caption"])

    async def scenario():
        say(archive, f"/package {dragon.pk}")
        (card,) = await until(lambda: from_bot(archive))
        press(archive, card["id"], "Send me")
        await until(lambda: [m for m in from_bot(archive) if m["document"] == "dragon.zip"])
        press(archive, card["id"], "Send me")
        return card, await until(lambda: [m for m in from_bot(archive) if "already sent" in m["text"]])

    card, (again,) = with_bot(scenario)
    # The size as every page writes it: core's one formatter.
    assert card["text"].splitlines() == ["dragon.zip", f"Size: {size_text(1030)}", "Files: 3", "Collection: Dragons"]
    assert re.fullmatch(r"dragon\.zip was already sent to you \(\d\d:\d\d UTC\)\.", again["text"]), "with its zone"
    assert card["buttons"] == [["Send me"], ["Collection: Dragons"]]
    assert card["document"] == "preview.jpg", "the card is its preview, the text its caption"
    documents = [m for m in from_bot(archive) if m["document"] and m["document"] != "preview.jpg"]
    assert [(m["document"], m["text"]) for m in documents] == [("dragon.zip", "Red dragon, 75 mm")], "its caption"
    delivery = BotDelivery.objects.get()
    assert (delivery.person.user_id, delivery.package, delivery.state) == (DANA, dragon, BotDeliveryState.SENT)
    assert delivery.message_ids == [documents[0]["id"]]


def test_the_whole_collection_is_sent_paced_one_a_second_per_person(archive, settings):
    settings.BOT_PERSON_SECONDS_BETWEEN_SENDS = 1
    collection = Collection.objects.get()

    async def scenario():
        say(archive, f"/collection {collection.pk}")
        (card,) = await until(lambda: from_bot(archive))
        press(archive, card["id"], "Send the whole collection")
        return card, await until(lambda: len([m for m in from_bot(archive) if m["document"]]) == 2 or None)

    card, _ = with_bot(scenario)
    assert card["text"] == "Dragons: 2 packages."
    assert card["buttons"][-1] == ["Send the whole collection"]
    documents = [m for m in from_bot(archive) if m["document"]]
    assert [m["document"] for m in documents] == ["dragon.zip", "dragon-bust.zip"]
    first, second = (datetime.fromisoformat(m["date"]) for m in documents)
    # The pacer spaces the requests a second apart (test_the_pacer_...); the server's dates also carry each
    # request's own latency, so the check here keeps a margin for a loaded machine.
    assert (second - first).total_seconds() >= 0.5, "one message a second to one person"


def test_the_pacer_keeps_a_second_between_sends_to_one_person_and_thirty_a_second_overall():
    async def slots():
        pacer = Pacer(per_second=30, person_gap=1)
        loop = asyncio.get_running_loop()
        start, found = loop.time(), []
        for user_id in (1, 2, 3, 1):
            await pacer.wait(user_id)
            found.append((user_id, loop.time() - start))
        return found

    found = asyncio.run(slots())
    assert [user_id for user_id, _ in found] == [1, 2, 3, 1]
    times = [at for _, at in found]
    # Each send waits for its slot: never before start + n/30 s, and one person's second never within a second
    # of the start (a loaded machine may wake later, never sooner).
    assert all(at >= n / 30 - 0.005 for n, at in enumerate(times[:3]))
    assert times[3] >= 1 - 0.005


def test_a_blocked_person_and_one_off_the_allow_list_are_refused_in_words(archive):
    BotPerson.objects.create(user_id=EVAN, blocked=True)
    BotSettings.objects.filter(pk=1).update(audience="allow_list", allowed_user_ids=[EVAN])

    async def scenario():
        say(archive, "/latest", user_id=EVAN)
        say(archive, "/latest", user_id=DANA)
        return await until(lambda: from_bot(archive, EVAN)), await until(lambda: from_bot(archive, DANA))

    (evan,), (dana,) = with_bot(scenario)
    assert evan["text"] == "You can't use this bot."
    assert dana["text"] == f"This bot is for the archive's members. Ask an operator to add you (your id is {DANA})."


def test_the_daily_limit_is_answered_in_words(archive):
    BotSettings.objects.filter(pk=1).update(sends_per_day=1)
    collection = Collection.objects.get()

    async def scenario():
        say(archive, f"/collection {collection.pk}")
        (card,) = await until(lambda: from_bot(archive))
        press(archive, card["id"], "Send the whole collection")
        await until(lambda: [m for m in from_bot(archive) if m["document"]])
        return await until(lambda: [m for m in from_bot(archive) if "24 hours" in m["text"]])

    with_bot(scenario)
    assert [m["document"] for m in from_bot(archive) if m["document"]] == ["dragon.zip"]
    assert BotDelivery.objects.count() == 1


def test_a_subscription_is_told_once_of_a_package_that_lands(archive):
    def lands():
        lair = Package.objects.create(
            content_hash="f" * 64,
            file_name="dragon-lair.zip",
            file_size=1034,
            archive_type="zip",
            destination_chat=Chat.objects.get(telegram_id=ARCHIVE),
            dest_message_ids=[34],
        )
        package_search_words_update(package=lair)

    async def scenario():
        say(archive, "/subscribe lair")
        await until(lambda: [m for m in from_bot(archive) if m["text"].startswith("Subscribed")])
        await in_db_thread(lands)()
        told = await until(lambda: [m for m in from_bot(archive) if "new package" in m["text"]])
        await asyncio.sleep(1)  # a few more rounds
        say(archive, "/subscriptions")
        await until(lambda: [m for m in from_bot(archive) if m["text"].startswith("You are subscribed")])
        return told

    (told,) = with_bot(scenario)
    assert told["text"] == "1 new package for “lair”:"
    assert told["buttons"] == [["dragon-lair.zip"]]
    assert len([m for m in from_bot(archive) if "new package" in m["text"]]) == 1
    assert BotNotice.objects.get().told_at is not None
    assert from_bot(archive)[-1]["text"] == "You are subscribed to:\n• lair"


def test_the_bot_off_answers_nobody_and_stops(archive):
    BotSettings.objects.filter(pk=1).update(enabled=False)

    async def scenario():
        return True

    assert with_bot(scenario)
    assert conversation(archive) == []


def test_run_bot_check_says_whether_the_bot_has_a_token(settings):
    settings.TELEGRAM_BOT_TOKEN = ""
    with pytest.raises(CommandError, match="no token"):
        call_command("run_bot", "--check")
    settings.TELEGRAM_BOT_TOKEN = TOKEN
    call_command("run_bot", "--check")
    settings.TELEGRAM_BOT_TOKEN = ""
    bot_settings_update(enabled=False, token=TOKEN, audience="everyone", allowed_user_ids=[], sends_per_day=5)
    call_command("run_bot", "--check")
    assert BotSettings.objects.get().token_sealed != TOKEN, "kept sealed"


def test_in_the_demo_dana_a_member_searches_and_finn_is_told_why_not(ingest_world, settings):
    """`make run`'s demo: the bot is for members of the demo chats that list people (the archive channel, Dana
    in it); Dana searches, Finn (in none of them) is told which chats the bot is for."""
    world = ingest_world(json.loads((settings.BASE_DIR / "telegram" / "sandbox" / "worlds" / "demo.json").read_text()))
    archive = Chat.objects.get(telegram_id=ARCHIVE)
    package = Package.objects.create(
        content_hash="d" * 64,
        file_name="red-dragon.zip",
        file_size=1000,
        archive_type="zip",
        destination_chat=archive,
        dest_message_ids=[1],
    )
    package_search_words_update(package=package)
    out = io.StringIO()
    call_command("demo_bot", stdout=out)
    bot = BotSettings.objects.get()
    assert (bot.enabled, bot.audience, list(bot.member_chats.all())) == (True, "members", [archive])
    assert "for members of Stashcast Archive" in out.getvalue()

    printed = re.findall(r"make manage ARGS='(.+)'", out.getvalue())
    assert [shlex.split(args)[0] for args in printed] == ["sandbox_say", "sandbox_dump", "sandbox_press", "sandbox_say"]

    async def scenario():
        for args in printed:  # as printed, quoting and all (the press needs a message number from the dump)
            if args.startswith("sandbox_say"):
                await in_db_thread(call_command)(*shlex.split(args), stdout=io.StringIO())
        return await until(lambda: from_bot(world)), await until(lambda: from_bot(world, FINN))

    (dana,), (finn,) = with_bot(scenario, token="7000001:DEMO")
    assert dana["text"].startswith("1 packages match “dragon”") and dana["buttons"], dana
    assert finn["text"] == "This bot is for members of Stashcast Archive. Join one of them, then write again."
    assert BotSettings.objects.get().username == "stash_bot"
    assert dict(BotPerson.objects.values_list("user_id", "member_of")) == {DANA: "Stashcast Archive", FINN: ""}


@pytest.mark.processes
def test_the_bot_process_answers_and_stops_quietly_on_sigterm(archive):
    bot = start_program(["manage.py", "run_bot"], TELEGRAM_BOT_TOKEN=TOKEN)
    try:
        # Logged in once it has written its @username: what people say from then on is pushed to it.
        wait_for(lambda: BotSettings.objects.get().username, timeout=60, what="the bot process's login")
        say(archive, "/start")
        wait_for(lambda: from_bot(archive), timeout=60, what="the bot process's answer")
    finally:
        bot.send_signal(signal.SIGTERM)
        _, errors = bot.communicate(timeout=30)
    assert bot.returncode == 0, errors
    assert "Traceback" not in errors, errors
    assert from_bot(archive)[0]["text"].startswith("I search the archive")


@pytest.mark.processes
def test_the_bot_process_waits_while_off_and_stops_quietly(archive):
    BotSettings.objects.filter(pk=1).update(enabled=False)
    bot = start_program(["manage.py", "run_bot"], TELEGRAM_BOT_TOKEN=TOKEN)
    try:
        said = bot.stderr.readline()  # once said, it waits for an operator to turn it on
        with pytest.raises(subprocess.TimeoutExpired):
            bot.wait(timeout=1)
    finally:
        bot.send_signal(signal.SIGTERM)
        _, errors = bot.communicate(timeout=30)
    assert bot.returncode == 0, errors
    assert "turn it on on the Bot page" in said
    assert conversation(archive) == []


@pytest.mark.processes
def test_the_bot_process_leaves_an_audit_entry_per_update_as_it_goes(archive):
    from core.models import AuditEntry

    bot = start_program(["manage.py", "run_bot"], TELEGRAM_BOT_TOKEN=TOKEN)
    try:
        wait_for(lambda: BotSettings.objects.get().username, timeout=60, what="the bot process's login")
        say(archive, "/start")
        entry = wait_for(
            lambda: AuditEntry.objects.filter(via="bot").first(), timeout=60, what="the bot's entry, while it runs"
        )
    finally:
        bot.send_signal(signal.SIGTERM)
        bot.communicate(timeout=30)
    assert entry.actor == "the bot"
    assert entry.summary.startswith(f"The bot answered Dana (@dana_prints, {DANA}):"), entry.summary
    assert not AuditEntry.objects.filter(via="command").exists(), "a bot's run is not one command's entry"
