"""Send to Telegram: a package's destination messages copied to a chat, paced, exactly once per part."""

import asyncio
import threading
import time
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.urls import reverse
from django.utils import timezone

from accounts.models import AccountPaceEvent, Chat, PaceEventKind, TelegramAccount
from core.errors import OperatorError
from core.leases import session_lease
from core.models import Notification, RunStatus
from core.runs import run_claim
from packages import sending
from packages.grouping import collection_create
from packages.models import Package, PackagePreview, PackageSend
from telegram.sandbox.content import picture
from telegram.sandbox.world import World
from tests.support.factories import work_queued
from tests.support.ingestion import (
    DESTINATION,
    READER,
    SOURCE,
    WRITER,
    documents,
    run_cycle,
    world,
    world_authorize_load,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("storage", "fast_pace", "fresh_buckets")]

FRIENDS = 5000
MESSAGES = [
    {"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}},
    {"id": 30, "document": {"name": "huge.zip", "size": 250_000, "seed": 5}},
]
FRIENDS_CHAT = {
    "id": FRIENDS,
    "title": "Friends",
    "type": "supergroup",
    "members": [READER, WRITER],
    "messages": [],
}


def build_once() -> None:
    world_authorize_load(world(messages=MESSAGES, more_chats=[FRIENDS_CHAT], limits={"upload_max_bytes": 100_000}))
    assert run_cycle().ingested == 2


@pytest.fixture
def ingested(built_copy, settings) -> World:
    """The two packages ingested (once for the module); this test's copy of the world."""
    return World(settings.SANDBOX_PATH)


def _execute(send: PackageSend) -> str | None:
    return sending.package_send_execute(send_id=send.pk)


def test_a_package_is_copied_part_by_part_to_the_chat(ingested):
    huge = Package.objects.get(file_name="huge.zip")
    friends = Chat.objects.get(telegram_id=FRIENDS)

    send = sending.package_send_create(packages=[huge], chat=friends)

    assert send.account.phone == WRITER, "the reader is not in the destination; the writer is"
    assert list(send.parts.values_list("message_id", flat=True)) == huge.dest_message_ids
    assert all(send.parts.values_list("random_id", flat=True)), "random_ids are stored before anything is sent"
    assert _execute(send) == RunStatus.SUCCESS
    copies = documents(FRIENDS)
    originals = {m["id"]: m for m in documents(DESTINATION)}
    assert [m["document"]["name"] for m in copies] == huge.dest_part_names
    sent_from = [originals[message_id] for message_id in huge.dest_message_ids]
    assert [m["document"]["sha256"] for m in copies] == [m["document"]["sha256"] for m in sent_from]
    assert all(m["text"].startswith("stashcast:") for m in sent_from)
    assert [m["text"] for m in copies] == ["", "", ""], "the catalog line stays in the destination"
    send.refresh_from_db()
    assert (send.parts_sent, send.parts_total, send.parts_failed) == (3, 3, 0)
    assert sorted(send.parts.values_list("sent_message_id", flat=True)) == [m["id"] for m in copies]


def test_a_part_sent_before_a_crash_is_not_sent_twice(ingested, sandbox_run):
    huge = Package.objects.get(file_name="huge.zip")
    send = sending.package_send_create(packages=[huge], chat=Chat.objects.get(telegram_id=FRIENDS))
    first = send.parts.get(position=0)
    writer = TelegramAccount.objects.get(phone=WRITER)
    refs = {link.chat.telegram_id: link.ref for link in writer.chat_links.select_related("chat")}
    # The worker copied part 1 and died before writing it down: the row still says unsent.
    sandbox_run(
        ingested,
        WRITER,
        lambda gateway: gateway.copy_message(
            refs[DESTINATION], first.message_id, refs[FRIENDS], random_id=first.random_id
        ),
    )
    assert len(documents(FRIENDS)) == 1

    assert _execute(send) == RunStatus.SUCCESS

    assert [m["document"]["name"] for m in documents(FRIENDS)] == huge.dest_part_names
    first.refresh_from_db()
    assert first.sent_at is not None and first.sent_message_id is None, "answered RANDOM_ID_DUPLICATE: sent before"


def test_a_second_delivery_of_the_task_sends_nothing(ingested):
    send = sending.package_send_create(
        packages=[Package.objects.get(file_name="dragon.zip")], chat=Chat.objects.get(telegram_id=FRIENDS)
    )
    assert _execute(send) == RunStatus.SUCCESS

    assert _execute(send) is None
    assert len(documents(FRIENDS)) == 1


def test_sends_are_paced_by_the_accounts_shared_budget(ingested, settings):
    settings.REMINDER_MAX_SEND_PER_MINUTE = 60  # one a second, after a burst of one
    settings.REMINDER_SEND_BURST = 1
    send = sending.package_send_create(
        packages=[Package.objects.get(file_name="huge.zip")], chat=Chat.objects.get(telegram_id=FRIENDS)
    )
    started = time.monotonic()

    assert _execute(send) == RunStatus.SUCCESS

    assert time.monotonic() - started >= 1.9, "three parts at one a second take two seconds at least"


def test_a_send_waits_for_the_accounts_session_and_stays_queued(ingested, settings):
    settings.TELEGRAM_SESSION_WAIT_SECONDS = 0
    send = sending.package_send_create(
        packages=[Package.objects.get(file_name="dragon.zip")], chat=Chat.objects.get(telegram_id=FRIENDS)
    )
    held, release = threading.Event(), threading.Event()

    def hold():
        async def main():
            async with session_lease(WRITER, wait_seconds=0):
                held.set()
                await asyncio.to_thread(release.wait)

        asyncio.run(main())

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait(10)
    try:
        assert _execute(send) == sending.BUSY
    finally:
        release.set()
        holder.join()
    send.refresh_from_db()
    assert send.status == RunStatus.QUEUED and not documents(FRIENDS)

    assert _execute(send) == RunStatus.SUCCESS
    assert len(documents(FRIENDS)) == 1


def test_a_deleted_destination_message_fails_its_part_only(ingested):
    from django.core.management import call_command

    huge = Package.objects.get(file_name="huge.zip")
    call_command("sandbox_delete", str(DESTINATION), str(huge.dest_message_ids[1]))
    send = sending.package_send_create(packages=[huge], chat=Chat.objects.get(telegram_id=FRIENDS))

    assert _execute(send) == RunStatus.PARTIAL

    send.refresh_from_db()
    assert (send.parts_sent, send.parts_failed) == (2, 1)
    assert send.outcome.text == "Partial: 2 of 3 parts copied"
    assert "MESSAGE_ID_INVALID" in send.parts.get(position=1).error
    assert Notification.objects.get(type=sending.SEND_FAILED).subject == f"package-send:{send.pk}"


def test_what_cannot_be_sent_is_refused_with_the_reason(ingested):
    dragon = Package.objects.get(file_name="dragon.zip")
    friends = Chat.objects.get(telegram_id=FRIENDS)
    reader = TelegramAccount.objects.get(phone=READER)

    with pytest.raises(ValidationError) as refused:
        sending.package_send_create(packages=[dragon], chat=friends, account=reader)
    assert "must read the destination" in str(refused.value.message_dict["account"])
    with pytest.raises(ValidationError) as refused:
        sending.package_send_create(packages=[dragon], chat=friends, topic_id=7)
    assert "has no topics" in str(refused.value.message_dict["topic_id"])
    with pytest.raises(ValidationError) as refused:
        sending.package_send_create(packages=[dragon], chat=Chat.objects.get(telegram_id=SOURCE))
    assert "No logged-in account both reads the destination" in str(refused.value.message_dict["chat"])
    sending.package_send_create(packages=[dragon], chat=friends)
    with pytest.raises(OperatorError, match="already being sent"):
        sending.package_send_create(packages=[dragon], chat=friends)
    Package.objects.filter(pk=dragon.pk).update(reupload_needed=True)
    dragon.refresh_from_db()
    with pytest.raises(OperatorError, match="uploads it again"):
        sending.package_send_create(packages=[dragon], chat=friends)


def test_a_send_held_by_a_live_worker_is_left_alone_until_its_heartbeat_goes_quiet(ingested):
    send = sending.package_send_create(
        packages=[Package.objects.get(file_name="dragon.zip")], chat=Chat.objects.get(telegram_id=FRIENDS)
    )
    # Held by this very process, alive: its lock went (a database restart), it has not noticed yet.
    assert run_claim(model=PackageSend, run_id=send.pk) is not None

    assert _execute(send) == sending.BUSY, "never two holders at once: tried again later"
    assert len(documents(FRIENDS)) == 0

    quiet = timezone.now() - timedelta(seconds=2 * django_settings.WORK_HEARTBEAT_SECONDS + 2)
    PackageSend.objects.filter(pk=send.pk).update(heartbeat_at=quiet)
    assert _execute(send) == RunStatus.SUCCESS, "quiet for two heartbeat periods: it stopped, so it is taken over"
    assert len(documents(FRIENDS)) == 1


def test_the_api_queues_a_send_and_shows_its_parts(ingested, api, django_capture_on_commit_callbacks):
    dragon = Package.objects.get(file_name="dragon.zip")

    with django_capture_on_commit_callbacks(execute=False) as queued:
        answer = api.post(f"/api/packages/{dragon.pk}/send/", {"chat": FRIENDS}, format="json")

    assert answer.status_code == 202, answer.json()
    body = answer.json()
    assert (body["status"], body["chat"], body["chat_title"], body["parts_total"]) == ("queued", FRIENDS, "Friends", 1)
    assert len(work_queued(queued)) == 1, "the task goes after commit"
    _execute(PackageSend.objects.get(pk=body["id"]))
    shown = api.get(f"/api/package-sends/{body['id']}/").json()
    assert shown["status"] == "success" and shown["parts"][0]["sent_message_id"] == documents(FRIENDS)[0]["id"]
    assert api.post(f"/api/package-sends/{body['id']}/retry/").status_code == 409


def test_the_api_answers_bad_input_with_what_to_fix(ingested, api):
    dragon = Package.objects.get(file_name="dragon.zip")

    unknown = api.post(f"/api/packages/{dragon.pk}/send/", {"chat": 424242}, format="json")
    assert unknown.status_code == 400 and "424242 is unknown" in unknown.json()["message"]
    nowhere = api.post(f"/api/packages/{dragon.pk}/send/", {"chat": SOURCE}, format="json")
    assert nowhere.status_code == 400 and "may post in" in nowhere.json()["message"]
    assert api.post(f"/api/packages/{dragon.pk}/send/", {"chat": "x"}, format="json").status_code == 400
    assert api.post(f"/api/packages/{dragon.pk}/send/", {"chat": FRIENDS}, format="json").status_code == 202
    again = api.post(f"/api/packages/{dragon.pk}/send/", {"chat": FRIENDS}, format="json")
    assert again.status_code == 409 and "already being sent" in again.json()["message"]
    schema = api.get("/api/schema/").content.decode()
    assert "/api/packages/{id}/send/" in schema and "/api/package-sends/{id}/retry/" in schema


def test_the_package_page_sends_and_shows_progress(ingested, admin_client):
    dragon = Package.objects.get(file_name="dragon.zip")
    writer = TelegramAccount.objects.get(phone=WRITER)
    friends = Chat.objects.get(telegram_id=FRIENDS)
    page = admin_client.get(reverse("packages:detail", args=[dragon.pk])).content.decode()
    target = f"{writer.pk}:{friends.pk}:"
    assert f'<option value="{target}">Friends</option>' in page

    answer = admin_client.post(reverse("packages:send", args=[dragon.pk]), {"target": target}, follow=True)

    page = answer.content.decode()
    assert "Sending 1 part to Friends." in page and 'hx-trigger="every 2s"' in page
    _execute(PackageSend.objects.get())
    polled = admin_client.get(reverse("packages:sends", args=[dragon.pk]), HTTP_HX_REQUEST="true")
    assert polled.status_code == 286, "nothing live: the polling stops"
    assert "1 of 1 part" in polled.content.decode() and "Success" in polled.content.decode()


def test_a_refused_send_shows_why_and_keeps_the_pick(ingested, admin_client):
    dragon = Package.objects.get(file_name="dragon.zip")
    reader = TelegramAccount.objects.get(phone=READER)
    friends = Chat.objects.get(telegram_id=FRIENDS)
    target = f"{reader.pk}:{friends.pk}:"

    answer = admin_client.post(reverse("packages:send", args=[dragon.pk]), {"target": target})

    assert answer.status_code == 400
    assert "must read the destination" in answer.content.decode()
    assert not PackageSend.objects.exists()
    bad = admin_client.post(reverse("packages:send", args=[dragon.pk]), {"target": "nonsense"})
    assert bad.status_code == 400 and "Pick the chat or the person to send to." in bad.content.decode()
    writer_target = f"{TelegramAccount.objects.get(phone=WRITER).pk}:{friends.pk}:"
    admin_client.post(reverse("packages:send", args=[dragon.pk]), {"target": writer_target})
    again = admin_client.post(reverse("packages:send", args=[dragon.pk]), {"target": writer_target})
    assert again.status_code == 400 and "already being sent" in again.content.decode()
    assert f'<option value="{writer_target}" selected>Friends</option>' in again.content.decode()


def test_a_collection_is_sent_as_one_send_in_posting_order(ingested, api, admin_client):
    dragon, huge = Package.objects.get(file_name="dragon.zip"), Package.objects.get(file_name="huge.zip")
    collection = collection_create(name="Dragon set", package_ids=[huge.pk, dragon.pk])
    page = admin_client.get(reverse("packages:collection", args=[collection.pk])).content.decode()
    assert "Copies the collection's 4 destination messages" in page

    answer = api.post(f"/api/collections/{collection.pk}/send/", {"chat": FRIENDS}, format="json")

    assert answer.status_code == 202, answer.json()
    body = answer.json()
    assert (body["title"], body["collection"], body["package"], body["parts_total"]) == (
        "Dragon set",
        collection.pk,
        None,
        4,
    )
    assert _execute(PackageSend.objects.get(pk=body["id"])) == RunStatus.SUCCESS
    names = [m["document"]["name"] for m in documents(FRIENDS)]
    assert names == [*dragon.dest_part_names, *huge.dest_part_names], "posted order: dragon (11), then huge (30)"
    again = admin_client.post(
        reverse("packages:collection-send", args=[collection.pk]),
        {"target": f"{TelegramAccount.objects.get(phone=WRITER).pk}:{Chat.objects.get(telegram_id=FRIENDS).pk}:"},
        follow=True,
    )
    assert "Sending 4 parts to Friends." in again.content.decode()


def test_a_flood_wait_pauses_the_accounts_budget_and_the_send_goes_on(ingested):
    ingested.fault_add({"op": "send", "chat": FRIENDS, "error": "flood_wait", "seconds": 1})
    send = sending.package_send_create(
        packages=[Package.objects.get(file_name="huge.zip")], chat=Chat.objects.get(telegram_id=FRIENDS)
    )
    started = time.monotonic()

    assert _execute(send) == RunStatus.SUCCESS

    assert time.monotonic() - started >= 1, "Telegram's wait was served"
    assert len(documents(FRIENDS)) == 3
    writer = TelegramAccount.objects.get(phone=WRITER)
    event = AccountPaceEvent.objects.get(account=writer)
    assert (event.kind, event.wait_seconds) == (PaceEventKind.FLOOD_WAIT, 1), "the account's health counts it"
    assert event.budget_after < event.budget_before == django_settings.REMINDER_MAX_SEND_PER_MINUTE
    assert writer.send_budget_per_minute == event.budget_after, "a fan-out of the account starts from it"


def test_flood_waits_past_the_threshold_rest_the_account_and_stop_the_send(ingested, settings):
    settings.ACCOUNT_REST_FLOOD_WAITS = 2
    ingested.fault_add({"op": "send", "chat": FRIENDS, "error": "flood_wait", "seconds": 1, "times": 2})
    send = sending.package_send_create(
        packages=[Package.objects.get(file_name="huge.zip")], chat=Chat.objects.get(telegram_id=FRIENDS)
    )

    assert _execute(send) == RunStatus.FAILED

    send.refresh_from_db()
    writer = TelegramAccount.objects.get(phone=WRITER)
    assert writer.is_resting and writer.rest_reason.startswith("2 FloodWaits within")
    assert send.parts_sent == 0 and "is resting until" in send.error, send.error
    assert documents(FRIENDS) == []


def test_peer_flood_rests_the_account_and_stops_the_send(ingested):
    ingested.fault_add({"op": "send", "chat": FRIENDS, "error": "peer_flood", "after": 1, "times": 100})
    send = sending.package_send_create(
        packages=[Package.objects.get(file_name="huge.zip")], chat=Chat.objects.get(telegram_id=FRIENDS)
    )

    assert _execute(send) == RunStatus.PARTIAL

    send.refresh_from_db()
    assert send.parts_sent == 1 and "PEER_FLOOD" in send.error and "rests" in send.error
    writer = TelegramAccount.objects.get(phone=WRITER)
    assert writer.is_resting, "PEER_FLOOD rests the account, as fan-out does"
    assert writer.auth_state == "authenticated", "a rest is not a ban: the login stays"


def test_a_send_stopped_before_its_first_part_did_nothing_and_says_why(ingested, admin_client, api):
    ingested.fault_add({"op": "send", "chat": FRIENDS, "error": "peer_flood", "times": 100})
    huge = Package.objects.get(file_name="huge.zip")
    send = sending.package_send_create(packages=[huge], chat=Chat.objects.get(telegram_id=FRIENDS))

    assert _execute(send) == RunStatus.FAILED

    send.refresh_from_db()
    assert (send.parts_sent, send.parts_failed) == (0, 0)
    assert send.outcome.key == "idle" and send.outcome.why.startswith("Writer rests (Telegram answered PEER_FLOOD")
    page = admin_client.get(reverse("packages:detail", args=[huge.pk])).content.decode()
    assert 'class="badge outcome--idle"' in page and "Failed" not in page.split('id="package-sends"')[1]
    answer = api.get(f"/api/package-sends/{send.pk}/").json()
    assert (answer["status"], answer["outcome"]) == ("failed", "idle")
    assert answer["outcome_text"] == f"Did nothing: {send.outcome.why}"


def test_the_sends_show_the_previews_of_what_they_copied(ingested, admin_client):
    dragon, huge = Package.objects.get(file_name="dragon.zip"), Package.objects.get(file_name="huge.zip")
    dragon.preview = PackagePreview.objects.create(
        package=dragon,
        source="photo",
        image=ContentFile(picture(seed="dragon"), name="dragon.jpg"),
        width=640,
        height=480,
    )
    dragon.save(update_fields=["preview"])
    collection = collection_create(name="Dragon set", package_ids=[huge.pk, dragon.pk])
    friends = Chat.objects.get(telegram_id=FRIENDS)
    assert _execute(sending.package_send_create(packages=[huge, dragon], chat=friends, collection=collection))
    sending.package_send_create(packages=[dragon], chat=friends)

    thumbnail = reverse("packages:preview-image", args=[dragon.pk, dragon.preview_id])
    for page in (
        reverse("packages:collection-sends", args=[collection.pk]),
        reverse("packages:sends", args=[dragon.pk]),
    ):
        html = admin_client.get(page, HTTP_HX_REQUEST="true").content.decode()
        assert html.count(f'src="{thumbnail}"') == 1, page
        assert 'alt="Preview of dragon.zip"' in html and "Preview of huge.zip" not in html, "huge.zip has none"
    assert admin_client.get(thumbnail).status_code == 200
