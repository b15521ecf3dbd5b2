"""What a member reads under a file the bot sends: the source post's caption (as the console's Send gives it,
packages.sending.package_send_captions), never the archive channel's catalog line (`stashcast:1 sha256=… src=…`,
which names the source channel and message). Every way the bot sends is read back as the member sees it, through
`sandbox_dump` of the real Telethon bot's sends to the sandbox server."""

import io
import json

import pytest
from django.core.management import call_command

from accounts.models import Chat
from core.db_thread import in_db_thread
from packages.bot.services import bot_settings_update
from packages.catalog import catalog_line
from packages.models import Collection, GroupingRule, Package
from packages.services.search import package_search_words_update
from telegram.sandbox import bots
from tests.support.bots import until, with_bot

TOKEN = "7000001:TEST"
BOT = "@stash_bot"
DANA = 7001
ARCHIVE, SOURCE = 3001, 2001
BUST, LAIR, OLD = "a" * 64, "b" * 64, "c" * 64


def _line(content_hash: str, part: int, parts: int, message: int) -> str:
    return catalog_line(
        content_hash=content_hash, part=part, parts=parts, source_chat_id=SOURCE, source_message_id=message, topic_id=42
    )


# The archive channel as ingestion leaves it: every upload captioned by its catalog line alone.
MESSAGES = [
    (30, "dragon-bust.zip", _line(BUST, 1, 1, 10)),
    (31, "dragon-lair.7z.001", _line(LAIR, 1, 2, 11)),
    (32, "dragon-lair.7z.002", _line(LAIR, 2, 2, 11)),
    (33, "old-dragon.zip", _line(OLD, 1, 1, 12)),
]
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
                {"id": mid, "text": text, "document": {"name": name, "size": 1000 + mid}}
                for mid, name, text in MESSAGES
            ],
        },
        {"id": DANA, "title": "Dana", "type": "user"},
    ],
}

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def archive(sandbox, settings):
    """Three packages in a collection: one with a source caption, one in two parts with its own, one ingested
    before captions were kept (none); the bot on for everyone."""
    settings.BOT_NOTICE_SECONDS = 0.2
    settings.BOT_PERSON_SECONDS_BETWEEN_SENDS = 0
    world = sandbox(WORLD)
    chat = Chat.objects.create(telegram_id=ARCHIVE, title="Archive", type="channel")
    dragons = Collection.objects.create(name="Dragons", rule=GroupingRule.OPERATOR)
    for content_hash, name, caption, ids in (
        (BUST, "dragon-bust.zip", "Red dragon bust, 75 mm, presupported", [30]),
        (LAIR, "dragon-lair.7z", "Dragon lair terrain (two volumes)", [31, 32]),
        (OLD, "old-dragon.zip", "", [33]),
    ):
        package = Package.objects.create(
            content_hash=content_hash,
            file_name=name,
            file_size=5000,
            archive_type=name.rsplit(".", 1)[1],
            caption=caption,
            destination_chat=chat,
            dest_message_ids=ids,
            collection=dragons,
        )
        package_search_words_update(package=package)
    bot_settings_update(enabled=True, token=TOKEN, audience="everyone", allowed_user_ids=[], sends_per_day=20)
    return world


def received() -> list[tuple[str, str]]:
    """The files Dana received from the bot and the text under each, as `sandbox_dump 7001 --json` shows them."""
    out = io.StringIO()
    call_command("sandbox_dump", str(DANA), "--json", stdout=out)
    (chat,) = json.loads(out.getvalue())["bots"]
    return [
        (m["document"], m["text"])
        for m in chat["messages"]
        if m["from"] == "bot" and m["document"] and m["document"] != "preview.jpg"
    ]


def from_bot(world) -> list[dict]:
    found = bots.conversations(world, DANA)
    return [m for m in (found[0]["messages"] if found else []) if m["from"] == "bot"]


def say(world, text: str) -> None:
    bots.person_says(world, user_id=DANA, username=BOT, text=text)


def press(world, message_id: int, button: str) -> None:
    bots.person_presses(world, user_id=DANA, username=BOT, message_id=message_id, button=button)


def test_send_me_gives_the_source_caption_not_the_catalog_line(archive):
    bust = Package.objects.get(file_name="dragon-bust.zip")

    async def scenario():
        say(archive, f"/package {bust.pk}")
        (card,) = await until(lambda: from_bot(archive))
        press(archive, card["id"], "Send me")
        await until(lambda: [m for m in from_bot(archive) if m["document"]])

    with_bot(scenario, TOKEN)
    assert received() == [("dragon-bust.zip", "Red dragon bust, 75 mm, presupported")]


def test_the_whole_collection_carries_each_packages_source_caption_under_its_first_part(archive):
    collection = Collection.objects.get()

    async def scenario():
        say(archive, f"/collection {collection.pk}")
        (card,) = await until(lambda: from_bot(archive))
        press(archive, card["id"], "Send the whole collection")
        await until(lambda: len([m for m in from_bot(archive) if m["document"]]) == 4 or None)

    with_bot(scenario, TOKEN)
    assert sorted(received()) == [
        ("dragon-bust.zip", "Red dragon bust, 75 mm, presupported"),
        ("dragon-lair.7z.001", "Dragon lair terrain (two volumes)"),
        ("dragon-lair.7z.002", ""),
        ("old-dragon.zip", ""),
    ]
    assert all("stashcast:" not in text for _, text in received())


def test_a_package_told_by_a_notice_comes_with_its_source_caption(archive):
    def lands():
        package = Package.objects.create(
            content_hash="d" * 64,
            file_name="dragon-egg.zip",
            file_size=5000,
            archive_type="zip",
            caption="Dragon egg, 40 mm",
            destination_chat=Chat.objects.get(telegram_id=ARCHIVE),
            dest_message_ids=[33],
        )
        package_search_words_update(package=package)

    async def scenario():
        say(archive, "/subscribe egg")
        await until(lambda: [m for m in from_bot(archive) if m["text"].startswith("Subscribed")])
        await in_db_thread(lands)()
        (notice,) = await until(lambda: [m for m in from_bot(archive) if "new package" in m["text"]])
        press(archive, notice["id"], "dragon-egg.zip")
        (card,) = await until(lambda: [m for m in from_bot(archive) if m["buttons"] == [["Send me"]]])
        press(archive, card["id"], "Send me")
        await until(lambda: [m for m in from_bot(archive) if m["document"] == "old-dragon.zip"])

    with_bot(scenario, TOKEN)
    assert received() == [("old-dragon.zip", "Dragon egg, 40 mm")]


def test_a_caption_longer_than_a_bot_may_send_is_cut_to_fit(archive):
    """A Premium poster's caption may be 2,048 UTF-16 units; a bot sends 1,024 at most (Telegram refuses more)."""
    bust = Package.objects.get(file_name="dragon-bust.zip")
    bust.caption = "Dragon 🐉 " * 200  # 2,000 units: each emoji is two
    bust.save(update_fields=["caption"])

    async def scenario():
        say(archive, f"/package {bust.pk}")
        (card,) = await until(lambda: from_bot(archive))
        press(archive, card["id"], "Send me")
        await until(lambda: [m for m in from_bot(archive) if m["document"]])

    with_bot(scenario, TOKEN)
    ((name, text),) = received()
    assert name == "dragon-bust.zip" and text.endswith("…")
    assert bust.caption.startswith(text[:-1]) and 1000 < len(text.encode("utf-16-le")) // 2 <= 1024
