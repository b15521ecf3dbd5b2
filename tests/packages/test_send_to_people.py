"""Send to Telegram to a person: a package's (or a collection's) destination messages copied into the private
chat an account has with them, exactly once per part; a topic, or an account without that private chat, is
refused with what to do."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from accounts.models import Chat, TelegramAccount
from core.models import RunStatus
from packages import sending
from packages.grouping import collection_create
from packages.models import Package, PackageSend
from telegram.sandbox.world import World
from tests.support.ingestion import DESTINATION, READER, WRITER, documents, run_cycle, world, world_authorize_load

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("storage", "fast_pace", "fresh_buckets")]

DANA, EVAN = 7001, 7002
MESSAGES = [
    {"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}},
    {"id": 30, "document": {"name": "huge.zip", "size": 250_000, "seed": 5}},
]
PEOPLE = [
    {"id": DANA, "title": "Dana", "type": "user", "username": "dana_prints", "members": [WRITER]},
    # only the reader, who cannot read the destination, has a private chat with Evan
    {"id": EVAN, "title": "Evan", "type": "user", "members": [READER]},
]


def build_once() -> None:
    world_authorize_load(world(messages=MESSAGES, more_chats=PEOPLE, limits={"upload_max_bytes": 100_000}))
    assert run_cycle().ingested == 2


@pytest.fixture
def ingested(built_copy, settings) -> World:
    """The two packages ingested (once for the module); this test's copy of the world."""
    return World(settings.SANDBOX_PATH)


def _execute(send: PackageSend) -> str | None:
    return sending.package_send_execute(send_id=send.pk)


def test_a_package_reaches_a_person_every_part_once_even_after_a_crash(ingested, sandbox_run):
    huge = Package.objects.get(file_name="huge.zip")
    dana = Chat.objects.get(telegram_id=DANA)
    send = sending.package_send_create(packages=[huge], chat=dana)
    assert send.account.phone == WRITER, "the one account that reads the destination and has a private chat with Dana"
    first = send.parts.get(position=0)
    writer = TelegramAccount.objects.get(phone=WRITER)
    refs = {link.chat.telegram_id: link.ref for link in writer.chat_links.select_related("chat")}
    # A worker copied part 1 to Dana and died before writing it down: the row still says unsent.
    copy = refs[DESTINATION], first.message_id, refs[DANA]
    sandbox_run(
        ingested, WRITER, lambda gateway: gateway.copy_message(*copy, random_id=first.random_id, caption=first.caption)
    )

    assert _execute(send) == RunStatus.SUCCESS
    assert _execute(send) is None, "a second delivery of the task sends nothing"

    copies = documents(DANA)
    originals = {m["id"]: m for m in documents(DESTINATION)}
    sent_from = [originals[message_id] for message_id in huge.dest_message_ids]
    assert [m["document"]["name"] for m in copies] == huge.dest_part_names, "every part once, in order"
    assert [(m["document"]["sha256"], m["text"]) for m in copies] == [
        (m["document"]["sha256"], "") for m in sent_from
    ], "the catalog line stays in the destination; the source post had no caption"
    assert {m["sender"] for m in copies} == {WRITER}
    send.refresh_from_db()
    assert (send.parts_sent, send.parts_failed) == (3, 0)
    first.refresh_from_db()
    assert first.sent_at is not None and first.sent_message_id is None, "answered RANDOM_ID_DUPLICATE: sent before"


def test_a_collection_goes_to_a_person_as_one_send_through_the_api(ingested, api):
    dragon, huge = Package.objects.get(file_name="dragon.zip"), Package.objects.get(file_name="huge.zip")
    collection = collection_create(name="Dragon set", package_ids=[huge.pk, dragon.pk])

    answer = api.post(f"/api/collections/{collection.pk}/send/", {"chat": DANA}, format="json")

    assert answer.status_code == 202, answer.json()
    body = answer.json()
    assert (body["chat"], body["chat_title"], body["topic_id"], body["parts_total"]) == (DANA, "Dana", None, 4)
    assert _execute(PackageSend.objects.get(pk=body["id"])) == RunStatus.SUCCESS
    names = [m["document"]["name"] for m in documents(DANA)]
    assert names == [*dragon.dest_part_names, *huge.dest_part_names], "posted order: dragon (11), then huge (30)"
    shown = api.get(f"/api/package-sends/{body['id']}/").json()
    assert shown["status"] == "success" and [p["sent_message_id"] for p in shown["parts"]] == [
        m["id"] for m in documents(DANA)
    ]


def test_the_send_form_lists_people_apart_and_sends_to_one(ingested, admin_client):
    dragon = Package.objects.get(file_name="dragon.zip")
    writer = TelegramAccount.objects.get(phone=WRITER)
    dana = Chat.objects.get(telegram_id=DANA)
    page = admin_client.get(reverse("packages:detail", args=[dragon.pk])).content.decode()
    people = page[page.index('<optgroup label="People, through Writer">') :]
    target = f"{writer.pk}:{dana.pk}:"
    assert f'<option value="{target}">Dana (@dana_prints)</option>' in people[: people.index("</optgroup>")]
    assert "Evan" not in page, "the reader cannot read the destination: Evan is out of reach"

    answer = admin_client.post(reverse("packages:send", args=[dragon.pk]), {"target": target}, follow=True)

    assert "Sending 1 part to Dana." in answer.content.decode()
    assert _execute(PackageSend.objects.get()) == RunStatus.SUCCESS
    assert [m["document"]["name"] for m in documents(DANA)] == dragon.dest_part_names


def test_a_topic_or_an_account_without_the_private_chat_is_refused_with_what_to_do(ingested, admin_client, api):
    dragon = Package.objects.get(file_name="dragon.zip")
    dana, evan = Chat.objects.get(telegram_id=DANA), Chat.objects.get(telegram_id=EVAN)
    reader, writer = TelegramAccount.objects.get(phone=READER), TelegramAccount.objects.get(phone=WRITER)

    with pytest.raises(ValidationError) as refused:
        sending.package_send_create(packages=[dragon], chat=dana, topic_id=5)
    assert refused.value.message_dict["topic_id"] == [
        "“Dana” is a person: a private chat has no topics; leave the topic empty."
    ]
    with pytest.raises(ValidationError) as refused:
        sending.package_send_create(packages=[dragon], chat=dana, account=reader)
    assert refused.value.message_dict["account"] == [
        "Reader A cannot do this: it must read the destination and have a private chat with “Dana”."
    ]
    with pytest.raises(ValidationError) as refused:
        sending.package_send_create(packages=[dragon], chat=evan)
    assert refused.value.message_dict["chat"] == [
        "No logged-in account both reads the destination and has a private chat with “Evan”."
    ]

    topic = admin_client.post(reverse("packages:send", args=[dragon.pk]), {"target": f"{writer.pk}:{dana.pk}:5"})
    assert topic.status_code == 400 and "a private chat has no topics" in topic.content.decode()
    stranger = admin_client.post(reverse("packages:send", args=[dragon.pk]), {"target": f"{reader.pk}:{dana.pk}:"})
    assert stranger.status_code == 400 and "have a private chat with “Dana”" in stranger.content.decode()

    for data, expected in (
        ({"chat": DANA, "topic_id": 5}, "a private chat has no topics"),
        ({"chat": DANA, "account": reader.pk}, "have a private chat with “Dana”"),
        ({"chat": EVAN}, "has a private chat with “Evan”"),
    ):
        answer = api.post(f"/api/packages/{dragon.pk}/send/", data, format="json")
        assert answer.status_code == 400 and expected in answer.json()["message"], answer.json()
    assert not PackageSend.objects.exists()
    schema = api.get("/api/schema/", {"format": "json"}).content.decode()
    assert "or the user id of a person it has a private chat" in schema


def test_a_send_to_a_person_the_account_lost_stops_with_what_to_do(ingested):
    send = sending.package_send_create(
        packages=[Package.objects.get(file_name="dragon.zip")], chat=Chat.objects.get(telegram_id=DANA)
    )
    send.account.chat_links.filter(chat__telegram_id=DANA).delete()  # a refresh no longer found the private chat

    assert _execute(send) == RunStatus.FAILED

    send.refresh_from_db()
    assert send.error == "Writer no longer has a private chat with “Dana”; refresh its chats and send again."
    assert not documents(DANA)
