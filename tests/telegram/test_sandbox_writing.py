"""Writing to the sandbox server through the Telethon gateway: uploads and limits, sends,
RANDOM_ID_DUPLICATE, slow mode, flood limits, forbidden targets and closed topics, media handles."""

import hashlib
import io
import json
import subprocess
import sys
import time

import pytest
from django.conf import settings
from django.core.management import call_command

from telegram.errors import FileReferenceExpired, FileTooLarge, FloodWait, NotFound, TargetForbidden, TelegramError
from telegram.formatting import text_format
from telegram.records import ChatRef, MessageEntity, SentMessage
from telegram.sandbox.world import chat_access_hash
from tests.support.reminders import png_bytes

WRITER, PREMIUM, MEMBER = "+15550000001", "+15550000002", "+15550000003"
WORLD = {
    "limits": {"upload_max_bytes": 1_000_000, "premium_upload_max_bytes": 2_000_000},
    "accounts": [{"phone": WRITER}, {"phone": PREMIUM, "premium": True}, {"phone": MEMBER}],
    "chats": [
        {
            "id": 3001,
            "title": "Destination",
            "type": "channel",
            "admins": [WRITER, PREMIUM],
            "members": [MEMBER],
            "messages": [{"id": 30, "text": "archive"}],
        },
        {
            "id": 3002,
            "title": "Forum destination",
            "type": "supergroup",
            "forum": True,
            "admins": [WRITER],
            "members": [MEMBER],
            "topics": [{"id": 5, "title": "Dragons"}, {"id": 6, "title": "Announcements", "closed": True}],
        },
        {"id": 4001, "title": "Group", "type": "group", "members": [MEMBER]},
        {
            "id": 4002,
            "title": "Slow",
            "type": "supergroup",
            "members": [MEMBER],
            "admins": [WRITER],
            "slow_mode_seconds": 60,
        },
        {"id": 4003, "title": "Read-only", "type": "supergroup", "members": [MEMBER], "members_can_post": False},
    ],
}


def ref(phone: str, chat_id: int) -> ChatRef:
    chat_type = {3002: "supergroup", 4001: "group", 4002: "supergroup", 4003: "supergroup"}.get(chat_id, "channel")
    return ChatRef(
        id=chat_id, access_hash=chat_access_hash(phone=phone, chat_id=chat_id, type=chat_type), type=chat_type
    )


def dump(chat_id: int) -> list[dict]:
    out = io.StringIO()
    call_command("sandbox_dump", str(chat_id), "--json", stdout=out)
    return json.loads(out.getvalue())["messages"]


@pytest.fixture
def big_file(tmp_path):
    path = tmp_path / "model.7z.001"
    path.write_bytes(bytes(range(256)) * 5860)  # 1,500,160 bytes: three parts, between the two limits
    return path


def test_upload_limit_depends_on_premium(sandbox, sandbox_run, big_file):
    world = sandbox(WORLD)

    def upload(phone):
        return lambda gateway: gateway.upload_document(
            ref(phone, 3001), path=str(big_file), file_name=big_file.name, random_id=7, caption="part 1"
        )

    with pytest.raises(FileTooLarge):
        sandbox_run(world, WRITER, upload(WRITER))
    sent = sandbox_run(world, PREMIUM, upload(PREMIUM))

    assert (sent.chat_id, sent.id, sent.random_id, sent.duplicate) == (3001, 31, 7, False)
    [_, posted] = dump(3001)
    assert posted["sender"] == PREMIUM
    assert posted["text"] == "part 1"
    assert posted["random_id"] == 7
    assert posted["document"] == {
        "name": "model.7z.001",
        "size": 1_500_160,
        "sha256": hashlib.sha256(big_file.read_bytes()).hexdigest(),
    }
    assert world.message_bytes(3001, 31) == big_file.read_bytes()
    calls = world.stats()["calls"]
    assert (calls[PREMIUM]["upload.saveFilePart"], calls[PREMIUM]["messages.sendMedia"]) == (3, 1)
    assert "upload.saveFilePart" not in calls[WRITER]  # refused before a byte was sent


def test_uploads_take_the_next_ids_and_a_retried_random_id_posts_nothing(sandbox, sandbox_run, tmp_path):
    world = sandbox(WORLD)
    small = tmp_path / "a.zip"
    small.write_bytes(b"PK" * 10)

    async def upload_three(gateway):
        chat = ref(WRITER, 3001)
        return [
            await gateway.upload_document(chat, path=str(small), file_name="a.zip", random_id=random_id)
            for random_id in (1, 2, 1)
        ]

    first, second, retry = sandbox_run(world, WRITER, upload_three)

    assert (first.id, second.id) == (31, 32)
    assert (retry.id, retry.duplicate, retry.random_id) == (None, True, 1)
    assert [message["id"] for message in dump(3001)] == [30, 31, 32]


def test_upload_into_a_forum_topic(sandbox, sandbox_run, tmp_path):
    world = sandbox(WORLD)
    small = tmp_path / "a.zip"
    small.write_bytes(b"PK")
    chat = ref(WRITER, 3002)

    sandbox_run(world, WRITER, lambda g: g.upload_document(chat, path=str(small), file_name="a.zip", random_id=1))
    sandbox_run(
        world, WRITER, lambda g: g.upload_document(chat, path=str(small), file_name="b.zip", random_id=2, topic_id=5)
    )

    assert [(message["id"], message["topic"]) for message in dump(3002)] == [(1, 1), (2, 5)]
    with pytest.raises(TargetForbidden):
        sandbox_run(
            world, WRITER, lambda g: g.upload_document(chat, path=str(small), file_name="c", random_id=3, topic_id=9)
        )


def test_send_message_dedupes_random_ids_per_chat(sandbox, sandbox_run):
    world = sandbox(WORLD)

    async def sends(gateway):
        return [
            await gateway.send_message(ref(MEMBER, 4001), random_id=99, text="Reminder"),
            await gateway.send_message(ref(MEMBER, 4001), random_id=99, text="Reminder"),
            await gateway.send_message(ref(MEMBER, 4002), random_id=99, text="Reminder"),
        ]

    first, again, elsewhere = sandbox_run(world, MEMBER, sends)

    assert (first.id, first.duplicate) == (1, False)
    assert (again.id, again.duplicate) == (None, True)
    assert (elsewhere.chat_id, elsewhere.id) == (4002, 1)
    assert [(m["text"], m["sender"], m["random_id"]) for m in dump(4001)] == [("Reminder", MEMBER, 99)]
    assert world.stats()["calls"][MEMBER]["messages.sendMessage"] == 3


def test_slow_mode_refuses_a_second_post_until_it_elapses(sandbox, sandbox_run, sandbox_clock):
    world = sandbox(WORLD)
    chat = ref(MEMBER, 4002)
    start = time.time()
    sandbox_clock(start)
    sandbox_run(world, MEMBER, lambda gateway: gateway.send_message(chat, random_id=1, text="one"))

    sandbox_clock(start + 45)
    with pytest.raises(FloodWait) as wait:
        sandbox_run(world, MEMBER, lambda gateway: gateway.send_message(chat, random_id=2, text="two"))
    assert (wait.value.seconds, wait.value.rpc) == (15, "SLOWMODE_WAIT")
    # admins are not slowed down
    admin = ref(WRITER, 4002)
    sandbox_run(world, WRITER, lambda gateway: gateway.send_message(admin, random_id=3, text="admin"))
    sandbox_run(world, WRITER, lambda gateway: gateway.send_message(admin, random_id=4, text="admin again"))

    sandbox_clock(start + 60)
    sent = sandbox_run(world, MEMBER, lambda gateway: gateway.send_message(chat, random_id=2, text="two"))
    assert sent.id == 4


@pytest.mark.parametrize(
    ("phone", "chat_id", "rpc"),
    [(MEMBER, 3001, "CHAT_ADMIN_REQUIRED"), (MEMBER, 4003, "CHAT_WRITE_FORBIDDEN")],
)
def test_posting_where_the_account_cannot_is_forbidden(sandbox, sandbox_run, tmp_path, phone, chat_id, rpc):
    world = sandbox(WORLD)
    small = tmp_path / "a.zip"
    small.write_bytes(b"PK")

    with pytest.raises(TargetForbidden) as forbidden:
        sandbox_run(world, phone, lambda gateway: gateway.send_message(ref(phone, chat_id), random_id=1, text="x"))
    assert forbidden.value.rpc == rpc
    with pytest.raises(TargetForbidden):
        sandbox_run(
            world,
            phone,
            lambda g: g.upload_document(ref(phone, chat_id), path=str(small), file_name="a.zip", random_id=2),
        )
    assert len(dump(chat_id)) == (1 if chat_id == 3001 else 0)


def test_uploaded_media_is_reused_until_its_handle_expires(sandbox, sandbox_run, tmp_path, sandbox_clock):
    world = sandbox(WORLD)
    start = time.time()
    sandbox_clock(start)
    image = tmp_path / "poster.jpg"
    image.write_bytes(b"\xff\xd8" + b"x" * 600_000)
    media = sandbox_run(
        world, MEMBER, lambda g: g.upload_media(path=str(image), file_name="poster.jpg", mime_type="image/jpeg")
    )

    async def send_everywhere(gateway):
        for chat_id in (4001, 4002):
            await gateway.send_message(ref(MEMBER, chat_id), random_id=chat_id, text="Caption", media=media)

    sandbox_run(world, MEMBER, send_everywhere)

    assert media.kind == "photo"
    calls = world.stats()["calls"][MEMBER]
    assert (calls["upload.saveFilePart"], calls["messages.uploadMedia"]) == (2, 1)  # uploaded once, sent twice
    assert calls["messages.sendMedia"] == 2
    for chat_id in (4001, 4002):
        [message] = dump(chat_id)
        assert (message["text"], message["document"]) == ("Caption", None)
        assert message["photo"]["sha256"] == hashlib.sha256(image.read_bytes()).hexdigest()
    with pytest.raises(FileReferenceExpired) as foreign:  # a handle is its own account's: upload it again
        sandbox_run(world, WRITER, lambda g: g.send_message(ref(WRITER, 4002), random_id=5, media=media))
    assert foreign.value.rpc == "MEDIA_INVALID"
    sandbox_clock(start + 3601)
    with pytest.raises(FileReferenceExpired):
        sandbox_run(world, MEMBER, lambda g: g.send_message(ref(MEMBER, 4001), random_id=6, media=media))


def test_an_uploaded_document_media_posts_a_document(sandbox, sandbox_run, tmp_path):
    world = sandbox(WORLD)
    sheet = tmp_path / "rules.pdf"
    sheet.write_bytes(b"%PDF-1.7")

    async def upload_and_send(gateway):
        media = await gateway.upload_media(path=str(sheet), file_name="rules.pdf", mime_type="application/pdf")
        return await gateway.send_message(ref(MEMBER, 4001), random_id=1, media=media)

    sandbox_run(world, MEMBER, upload_and_send)

    [message] = dump(4001)
    assert message["document"]["name"] == "rules.pdf"
    assert message["photo"] is None


def test_media_too_large_for_the_account_is_refused(sandbox, sandbox_run, big_file):
    world = sandbox(WORLD)

    with pytest.raises(FileTooLarge):
        sandbox_run(world, MEMBER, lambda g: g.upload_media(path=str(big_file), file_name="x", mime_type="video/mp4"))


def test_a_retried_random_id_is_recognised_at_once_without_a_retry(sandbox, sandbox_run):
    # Telegram answers RANDOM_ID_DUPLICATE as a 500; Telethon would retry that after 2 s sleeps.
    world = sandbox(WORLD)
    chat = ref(MEMBER, 4001)

    async def send_twice(gateway):
        first = await gateway.send_message(chat, random_id=4242, text="Reminder")
        started = time.monotonic()
        again = await gateway.send_message(chat, random_id=4242, text="Reminder")
        return first, again, time.monotonic() - started

    first, again, elapsed = sandbox_run(world, MEMBER, send_twice)

    assert first.duplicate is False
    assert again == SentMessage(chat_id=4001, id=None, random_id=4242, duplicate=True)
    assert elapsed < 0.5
    assert world.stats()["calls"][MEMBER]["messages.sendMessage"] == 2


def test_a_random_id_is_forgotten_after_telegrams_memory(sandbox, sandbox_run, sandbox_clock):
    world = sandbox({**WORLD, "quirks": {"random_id_memory_seconds": 600}})
    chat = ref(MEMBER, 4001)
    start = time.time()
    sandbox_clock(start)
    sandbox_run(world, MEMBER, lambda gateway: gateway.send_message(chat, random_id=7, text="one"))

    sandbox_clock(start + 599)
    assert sandbox_run(world, MEMBER, lambda g: g.send_message(chat, random_id=7, text="one")).duplicate is True
    sandbox_clock(start + 601)
    assert sandbox_run(world, MEMBER, lambda g: g.send_message(chat, random_id=7, text="one")).id == 2


def test_a_closed_topic_is_forbidden_to_members_but_not_to_admins(sandbox, sandbox_run):
    world = sandbox(WORLD)

    with pytest.raises(TargetForbidden) as closed:
        sandbox_run(world, MEMBER, lambda g: g.send_message(ref(MEMBER, 3002), random_id=1, text="hi", topic_id=6))
    assert closed.value.rpc == "TOPIC_CLOSED"
    sent = sandbox_run(world, WRITER, lambda g: g.send_message(ref(WRITER, 3002), random_id=2, text="hi", topic_id=6))
    assert [(message["id"], message["topic"], message["sender"]) for message in dump(3002)] == [(sent.id, 6, WRITER)]


def test_sends_above_the_accounts_rate_are_answered_flood_wait(sandbox, sandbox_run):
    world = sandbox(
        {**WORLD, "accounts": [{"phone": WRITER}, {"phone": PREMIUM}, {"phone": MEMBER, "flood_above_per_minute": 3}]}
    )
    chat = ref(MEMBER, 4001)

    async def five_sends(gateway):
        results = []
        for random_id in range(1, 6):
            try:
                results.append((await gateway.send_message(chat, random_id=random_id, text="x")).id)
            except FloodWait as wait:
                results.append(wait)
        return results

    results = sandbox_run(world, MEMBER, five_sends)

    assert results[:3] == [1, 2, 3]
    assert all(isinstance(wait, FloodWait) and 0 < wait.seconds <= 60 for wait in results[3:])
    assert world.stats()["flood_waits"] == {MEMBER: 2}
    assert len(dump(4001)) == 3


def test_the_server_enforces_the_upload_limit_even_when_the_gateway_thinks_otherwise(sandbox, sandbox_run, big_file):
    # The account's Premium lapsed after the gateway read it: Telegram refuses the parts beyond the limit.
    world = sandbox(WORLD)

    async def premium_lapses_then_upload(gateway):
        assert (await gateway.get_me()).premium
        world.account_update(PREMIUM, premium=False)
        return await gateway.upload_document(
            ref(PREMIUM, 3001), path=str(big_file), file_name=big_file.name, random_id=1
        )

    with pytest.raises(FileTooLarge):
        sandbox_run(world, PREMIUM, premium_lapses_then_upload)
    assert [message["id"] for message in dump(3001)] == [30]


@pytest.mark.parametrize(
    ("part", "total", "size", "rpc"),
    [
        (0, 3, 1000, "FILE_PART_SIZE_INVALID"),  # not a multiple of 1 KiB
        (0, 3, 3 * 1024, "FILE_PART_SIZE_INVALID"),  # 512 KiB is not a multiple of it
        (0, 3, 1024 * 1024, "FILE_PART_TOO_BIG"),
        (2, 3, 1000, None),  # the last part may be any size
        (0, 3, 128 * 1024, None),
    ],
)
def test_file_parts_have_telegrams_sizes(sandbox, sandbox_run, part, total, size, rpc):
    from telethon import errors, functions

    from telegram.telethon.errors import rpc_name

    world = sandbox(WORLD)

    async def save(gateway):
        request = functions.upload.SaveBigFilePartRequest(
            file_id=7, file_part=part, file_total_parts=total, bytes=b"x" * size
        )
        return await gateway._client(request)  # raw: the server's rule, whatever the adapter would send

    if rpc is None:
        assert sandbox_run(world, PREMIUM, save) is True
    else:
        with pytest.raises(errors.RPCError) as raised:
            sandbox_run(world, PREMIUM, save)
        assert rpc_name(raised.value) == rpc


POSTER = """
import asyncio, sys
from functools import partial
from telegram.records import ChatRef
from telegram.sandbox.sender import SandboxClient
from telegram.telethon.gateway import TelethonGateway

path, phone, session, first = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

async def main():
    client_factory = partial(SandboxClient, world_path=path, phone=phone)
    async with TelethonGateway(phone, session, 1, "sandbox", client_factory=client_factory) as gateway:
        for random_id in range(first, first + 15):
            await gateway.send_message(ChatRef(id=4001, type="group"), random_id=random_id, text=str(random_id))

asyncio.run(main())
"""


@pytest.mark.processes
def test_processes_posting_at_once_get_distinct_consecutive_ids(sandbox):
    world = sandbox(WORLD)
    session = world.session_issue(MEMBER)

    posters = [
        subprocess.Popen(
            [sys.executable, "-c", POSTER, str(world.path), MEMBER, session, str(first)], cwd=settings.BASE_DIR
        )
        for first in (100, 200, 300)
    ]

    assert [poster.wait(timeout=60) for poster in posters] == [0, 0, 0]
    messages = dump(4001)
    assert [message["id"] for message in messages] == list(range(1, 46))
    assert sorted(message["random_id"] for message in messages) == [
        *range(100, 115),
        *range(200, 215),
        *range(300, 315),
    ]


def test_a_copy_is_the_same_document_and_caption_posted_by_the_copier_once(sandbox, sandbox_run, tmp_path):
    world = sandbox(WORLD)
    small = tmp_path / "a.zip"
    small.write_bytes(b"PK" * 10)
    source = sandbox_run(
        world,
        WRITER,
        lambda g: g.upload_document(ref(WRITER, 3001), path=str(small), file_name="a.zip", random_id=1, caption="line"),
    )

    async def copy_twice(gateway):
        return [
            await gateway.copy_message(ref(WRITER, 3001), source.id, ref(WRITER, 3002), random_id=7, topic_id=5)
            for _ in range(2)
        ]

    first, again = sandbox_run(world, WRITER, copy_twice)

    assert (first.chat_id, first.id, first.duplicate) == (3002, 1, False)
    assert (again.id, again.duplicate) == (None, True), "a retried random_id posts nothing"
    [copy] = dump(3002)
    original = next(m for m in dump(3001) if m["id"] == source.id)
    assert (copy["document"]["sha256"], copy["text"], copy["sender"], copy["topic"]) == (
        original["document"]["sha256"],
        "line",
        WRITER,
        5,
    )


@pytest.mark.parametrize(
    ("phone", "from_chat", "message_id", "to_chat", "error", "rpc"),
    [
        (MEMBER, 3001, 30, 3001, TargetForbidden, "CHAT_ADMIN_REQUIRED"),  # may read, may not post
        (MEMBER, 3001, 30, 4003, TargetForbidden, "CHAT_WRITE_FORBIDDEN"),
        (MEMBER, 3001, 999, 4001, NotFound, "MESSAGE_ID_INVALID"),  # gone from the source
        (PREMIUM, 4001, 1, 3001, TargetForbidden, "CHAT_ID_INVALID"),  # cannot read the source
    ],
)
def test_a_copy_is_refused_as_telegram_refuses_it(
    sandbox, sandbox_run, phone, from_chat, message_id, to_chat, error, rpc
):
    world = sandbox(WORLD)

    with pytest.raises(error) as refused:
        sandbox_run(
            world,
            phone,
            lambda g: g.copy_message(ref(phone, from_chat), message_id, ref(phone, to_chat), random_id=3),
        )
    assert refused.value.rpc == rpc


def test_a_send_keeps_its_entities_and_sandbox_dump_shows_them(sandbox, sandbox_run):
    world = sandbox(WORLD)
    formatted = text_format("🎉 **Sale** [shop](https://shop.example)", format="markdown")

    sent = sandbox_run(
        world,
        MEMBER,
        lambda gateway: gateway.send_message(
            ref(MEMBER, 4001), random_id=1, text=formatted.text, entities=formatted.entities
        ),
    )

    assert sent.id == 1
    [message] = dump(4001)
    assert message["text"] == "🎉 Sale shop"
    assert message["entities"] == [
        {"type": "bold", "offset": 3, "length": 4},
        {"type": "text_url", "offset": 8, "length": 4, "url": "https://shop.example"},
    ]


@pytest.mark.parametrize(
    ("text", "entities", "rpc"),
    [
        ("🎉" * 2049, (), "MESSAGE_TOO_LONG"),  # 2,049 characters, 4,098 UTF-16 units
        ("short", (MessageEntity(type="bold", offset=3, length=3),), "ENTITY_BOUNDS_INVALID"),
    ],
)
def test_telegram_refuses_a_text_too_long_in_utf16_units_or_entities_outside_it(
    sandbox, sandbox_run, text, entities, rpc
):
    world = sandbox(WORLD)

    with pytest.raises(TelegramError) as refused:
        sandbox_run(
            world,
            MEMBER,
            lambda gateway: gateway.send_message(ref(MEMBER, 4001), random_id=1, text=text, entities=entities),
        )

    assert refused.value.rpc == rpc
    assert dump(4001) == []


def test_an_album_is_one_grouped_id_with_one_caption_and_a_retry_posts_nothing(sandbox, sandbox_run, tmp_path):
    world = sandbox(WORLD)
    pictures = []
    for seed in range(3):
        pictures.append(tmp_path / f"p{seed}.png")
        pictures[-1].write_bytes(png_bytes(seed))
    caption = text_format("**Three** new kits", format="markdown")

    async def upload_and_send_twice(gateway):
        media = [
            await gateway.upload_media(path=str(path), file_name=path.name, mime_type="image/png") for path in pictures
        ]
        send = dict(random_id=2**63 - 2, media=media, text=caption.text, entities=caption.entities)
        return [await gateway.send_album(ref(MEMBER, 4001), **send) for _ in range(2)]

    first, retried = sandbox_run(world, MEMBER, upload_and_send_twice)

    assert (first.id, first.duplicate) == (1, False)
    assert (retried.id, retried.duplicate) == (None, True)
    messages = dump(4001)
    assert [message["id"] for message in messages] == [1, 2, 3]
    assert len({message["grouped_id"] for message in messages}) == 1 and messages[0]["grouped_id"]
    assert [message["text"] for message in messages] == ["Three new kits", "", ""]
    assert messages[0]["entities"] == [{"type": "bold", "offset": 0, "length": 5}]
    assert [message["photo"]["sha256"] for message in messages] == [
        hashlib.sha256(path.read_bytes()).hexdigest() for path in pictures
    ]
    # the items' random_ids follow the album's, wrapping within 64 bits
    assert [message["random_id"] for message in messages] == [2**63 - 2, 2**63 - 1, -(2**63)]
    assert world.stats()["calls"][MEMBER]["messages.sendMultiMedia"] == 2


def test_an_album_of_one_or_eleven_is_refused(sandbox, sandbox_run, tmp_path):
    world = sandbox(WORLD)
    path = tmp_path / "p.png"
    path.write_bytes(png_bytes(1))

    async def send(gateway, count):
        media = await gateway.upload_media(path=str(path), file_name="p.png", mime_type="image/png")
        return await gateway.send_album(ref(MEMBER, 4001), random_id=1, media=[media] * count)

    for count, rpc in ((1, "MEDIA_INVALID"), (11, "MULTI_MEDIA_TOO_LONG")):
        with pytest.raises(TelegramError) as refused:
            sandbox_run(world, MEMBER, lambda gateway, count=count: send(gateway, count))
        assert refused.value.rpc == rpc
    assert dump(4001) == []
