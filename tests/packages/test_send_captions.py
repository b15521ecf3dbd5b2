"""What recipients see: a package sent to a chat or a person carries the source caption, or the one the operator
writes, never the catalog line (which stays in the destination); Telegram's caption limit is checked first."""

import pytest
from django.core.exceptions import ValidationError

from accounts.models import Chat, TelegramAccount
from core.models import RunStatus
from packages import sending
from packages.grouping import collection_create
from packages.models import Package
from telegram.errors import TelegramError
from telegram.sandbox.world import World
from tests.support.ingestion import DESTINATION, READER, WRITER, documents, run_cycle, world, world_authorize_load

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("storage", "fast_pace", "fresh_buckets")]

FRIENDS = 5000
CAPTION = "Red Wyvern by Hollowforge 🐉\npass: hunter2"
MESSAGES = [
    {
        "id": 11,
        "text": CAPTION,
        "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]},
    },
    {"id": 30, "text": "A big one", "document": {"name": "huge.zip", "size": 250_000, "seed": 5}},
]
FRIENDS_CHAT = {"id": FRIENDS, "title": "Friends", "type": "supergroup", "members": [READER, WRITER], "messages": []}


def build_once() -> None:
    world_authorize_load(world(messages=MESSAGES, more_chats=[FRIENDS_CHAT], limits={"upload_max_bytes": 100_000}))
    assert run_cycle().ingested == 2


@pytest.fixture
def ingested(built_copy, settings) -> World:
    """The two packages ingested (once for the module); this test's copy of the world."""
    return World(settings.SANDBOX_PATH)


def _friends() -> Chat:
    return Chat.objects.get(telegram_id=FRIENDS)


def _sent_texts() -> list[tuple[str, str]]:
    return [(m["document"]["name"], m["text"]) for m in documents(FRIENDS)]


def test_recipients_read_the_source_caption_never_the_catalog_line(ingested):
    dragon, huge = Package.objects.get(file_name="dragon.zip"), Package.objects.get(file_name="huge.zip")

    send = sending.package_send_create(packages=[dragon], chat=_friends())
    assert sending.package_send_execute(send_id=send.pk) == RunStatus.SUCCESS
    send = sending.package_send_create(packages=[huge], chat=_friends())
    assert sending.package_send_execute(send_id=send.pk) == RunStatus.SUCCESS

    assert _sent_texts() == [
        ("dragon.zip", CAPTION),
        ("huge.zip.001", "A big one"),  # the first part carries it; the others nothing
        ("huge.zip.002", ""),
        ("huge.zip.003", ""),
    ]
    kept = [m["text"] for m in documents(DESTINATION)]
    assert len(kept) == 4 and all(text.startswith("stashcast:") for text in kept), "the catalog stays as it was"
    copy = documents(FRIENDS)[0]
    assert copy["document"]["sha256"] == documents(DESTINATION)[0]["document"]["sha256"], "the same file"


def test_the_operator_may_write_the_caption_or_send_none(ingested):
    dragon, huge = Package.objects.get(file_name="dragon.zip"), Package.objects.get(file_name="huge.zip")

    written = sending.package_send_create(packages=[dragon], chat=_friends(), caption="For the group: enjoy")
    assert sending.package_send_execute(send_id=written.pk) == RunStatus.SUCCESS
    bare = sending.package_send_create(packages=[huge], chat=_friends(), caption="")
    assert sending.package_send_execute(send_id=bare.pk) == RunStatus.SUCCESS

    assert _sent_texts() == [
        ("dragon.zip", "For the group: enjoy"),
        ("huge.zip.001", ""),
        ("huge.zip.002", ""),
        ("huge.zip.003", ""),
    ]


def test_a_collection_carries_each_packages_own_caption(ingested):
    packages = [Package.objects.get(file_name="dragon.zip"), Package.objects.get(file_name="huge.zip")]
    collection = collection_create(name="Drop", package_ids=[package.pk for package in packages])

    send = sending.package_send_create(packages=packages, chat=_friends(), collection=collection)

    assert list(send.parts.values_list("caption", flat=True)) == [CAPTION, "A big one", "", ""]


def test_a_caption_longer_than_telegram_takes_is_refused_in_utf16_units(ingested):
    dragon = Package.objects.get(file_name="dragon.zip")
    dragons = "🐉" * 513  # 513 characters, 1,026 UTF-16 units

    with pytest.raises(ValidationError) as refused:
        sending.package_send_create(packages=[dragon], chat=_friends(), caption=dragons)

    assert refused.value.message_dict["caption"] == [
        "The caption is 1,026 characters long as Telegram counts them; at most 1,024 go under a file "
        "(2,048 for a Premium account). Write a shorter one."
    ]
    assert not dragon.sends.exists(), "nothing queued"
    TelegramAccount.objects.filter(phone=WRITER).update(is_premium=True)
    ingested.account_update(WRITER, premium=True)
    send = sending.package_send_create(packages=[dragon], chat=_friends(), caption=dragons)
    assert sending.package_send_execute(send_id=send.pk) == RunStatus.SUCCESS
    assert _sent_texts() == [("dragon.zip", dragons)]


def test_telegram_refuses_a_caption_above_the_limit(ingested, sandbox_run):
    writer = TelegramAccount.objects.get(phone=WRITER)
    refs = {link.chat.telegram_id: link.ref for link in writer.chat_links.select_related("chat")}
    dragon = Package.objects.get(file_name="dragon.zip")
    copy = refs[DESTINATION], dragon.dest_message_ids[0], refs[FRIENDS]

    with pytest.raises(TelegramError) as refused:
        sandbox_run(ingested, WRITER, lambda gateway: gateway.copy_message(*copy, random_id=5, caption="x" * 1025))

    assert refused.value.rpc == "MEDIA_CAPTION_TOO_LONG"
    assert documents(FRIENDS) == []


def test_a_captioned_part_sent_before_a_crash_is_not_sent_twice(ingested, sandbox_run):
    dragon = Package.objects.get(file_name="dragon.zip")
    send = sending.package_send_create(packages=[dragon], chat=_friends())
    part = send.parts.get()
    writer = TelegramAccount.objects.get(phone=WRITER)
    refs = {link.chat.telegram_id: link.ref for link in writer.chat_links.select_related("chat")}
    copy = refs[DESTINATION], part.message_id, refs[FRIENDS]
    # The worker sent it and died before writing it down.
    sandbox_run(
        ingested, WRITER, lambda gateway: gateway.copy_message(*copy, random_id=part.random_id, caption=CAPTION)
    )

    assert sending.package_send_execute(send_id=send.pk) == RunStatus.SUCCESS

    assert _sent_texts() == [("dragon.zip", CAPTION)]
    part.refresh_from_db()
    assert part.sent_at is not None and part.sent_message_id is None, "answered RANDOM_ID_DUPLICATE: sent before"


def test_the_api_sends_with_the_operators_caption_and_refuses_a_long_one(ingested, api):
    dragon = Package.objects.get(file_name="dragon.zip")

    too_long = api.post(f"/api/packages/{dragon.pk}/send/", {"chat": FRIENDS, "caption": "x" * 1100}, format="json")
    queued = api.post(f"/api/packages/{dragon.pk}/send/", {"chat": FRIENDS, "caption": "Hi"}, format="json")

    assert too_long.status_code == 400
    assert "at most 1,024 go under a file" in str(too_long.json())
    assert queued.status_code == 202, queued.json()
    assert [part["caption"] for part in queued.json()["parts"]] == ["Hi"]


def test_the_send_form_starts_from_the_source_caption_and_previews_the_message(ingested, operator):
    dragon = Package.objects.get(file_name="dragon.zip")
    writer = TelegramAccount.objects.get(phone=WRITER)
    target = f"{writer.pk}:{_friends().pk}:"

    page = operator.get(f"/packages/{dragon.pk}/").content.decode()
    preview = operator.get(f"/packages/{dragon.pk}/send/preview/", {"target": target, "caption": "Hello\nthere"})
    too_long = operator.get(f"/packages/{dragon.pk}/send/preview/", {"target": target, "caption": "🐉" * 600})
    refused = operator.post(f"/packages/{dragon.pk}/send/", {"target": target, "caption": "🐉" * 600})

    assert 'name="caption"' in page and "Red Wyvern by Hollowforge 🐉\npass: hunter2</textarea>" in page
    body = preview.content.decode()
    assert "As it will arrive in Friends" in body and "dragon.zip" in body and "Hello<br>there" in body
    assert "stashcast:" not in body
    assert "1,200 characters long as Telegram counts them" in too_long.content.decode()
    assert refused.status_code == 400 and "1,200 characters long" in refused.content.decode()
    assert not dragon.sends.exists()
