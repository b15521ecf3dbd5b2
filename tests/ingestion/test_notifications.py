"""Ingestion failures raise notifications (ingestion/notifications.py, called from the pipeline and recovery)."""

import pytest
from django.urls import reverse

from accounts.models import AuthState, TelegramAccount
from core.models import Notification, RunStatus
from ingestion.models import AccountChannelMap, Channel, MapRole, SkippedPackage, SkipReason
from ingestion.recovery import packages_check_destination
from packages import services as package_services
from packages.models import Package
from tests.support.ingestion import DESTINATION, READER, SOURCE, run_cycle, uploads, world

pytestmark = pytest.mark.django_db

ZIP = {"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}}


def test_a_channel_that_became_private_raises_one_notification_per_day(ingest_world):
    sandbox = ingest_world(world(messages=[ZIP]))
    # The reader was removed from the channel: Telegram answers CHANNEL_PRIVATE.
    sandbox.member_set(SOURCE, READER, member=False)

    first = run_cycle()
    run_cycle()

    assert first.status == RunStatus.PARTIAL
    channel = Channel.objects.get(chat__telegram_id=SOURCE)
    notification = Notification.objects.get(type="channel_unreachable")
    assert notification.subject == f"channel:{channel.pk}" and notification.severity == "error"
    assert notification.title == "Channel Models A is unreachable"
    assert "CHANNEL_PRIVATE" in notification.message or "private" in notification.message
    assert notification.url == reverse("ingestion:channel-detail", args=[channel.pk])
    assert notification.count == 2, "the second cycle bumps the same notification"

    sandbox.member_set(SOURCE, READER)
    assert run_cycle().status == RunStatus.SUCCESS
    assert Channel.objects.get(pk=channel.pk).last_error == "", "reachable again: the error is cleared"


def test_a_restricted_account_raises_a_notification(ingest_world):
    sandbox = ingest_world(world(messages=[ZIP]))
    sandbox.account_update(READER, banned=True)  # USER_DEACTIVATED_BAN from then on

    run = run_cycle()

    assert run.status == RunStatus.FAILED
    account = TelegramAccount.objects.get(phone=READER)
    assert account.auth_state == AuthState.RESTRICTED
    notification = Notification.objects.get(type="account_unusable")
    assert notification.subject == f"account:{account.pk}"
    assert notification.title == "Account Reader A was restricted by Telegram"
    assert notification.url == reverse("accounts:list")


def test_peer_flood_while_reading_rests_the_account_and_raises_no_notification(ingest_world):
    ingest_world(
        world(messages=[ZIP], faults=[{"op": "history", "account": READER, "error": "peer_flood", "times": 5}])
    )

    run = run_cycle()

    assert run.status == RunStatus.PARTIAL and "is resting" in run.error
    account = TelegramAccount.objects.get(phone=READER)
    assert account.auth_state == AuthState.AUTHENTICATED and account.resting_until is not None
    assert not Notification.objects.filter(type="account_unusable").exists()


def test_no_destination_writer_raises_a_notification(ingest_world):
    ingest_world(world(messages=[ZIP]))
    AccountChannelMap.objects.filter(role=MapRole.WRITER).delete()

    run_cycle()

    notification = Notification.objects.get(type="destination_unreachable")
    assert notification.title == "The destination Archive has no logged-in writer"
    assert notification.subject == "destination"


def test_no_destination_at_all_raises_a_notification(ingest_world):
    ingest_world(world(messages=[ZIP]))
    Channel.objects.filter(is_destination=True).update(is_destination=False)

    run_cycle()

    notification = Notification.objects.get(type="destination_unreachable")
    assert notification.title == "No destination channel"
    assert notification.url == reverse("ingestion:channels")


def test_a_destination_that_refuses_uploads_raises_a_notification(ingest_world):
    ingest_world(world(messages=[ZIP], faults=[{"op": "upload", "error": "write_forbidden", "times": 5}]))

    run_cycle()

    notification = Notification.objects.get(type="destination_unreachable")
    assert notification.title == "The destination Archive refused an upload"
    assert "dragon.zip" in notification.message


def test_a_split_that_does_not_rejoin_is_skipped_with_a_notification(ingest_world, monkeypatch):
    limits = {"upload_max_bytes": 100_000, "premium_upload_max_bytes": 400_000}
    big = {"id": 11, "document": {"name": "big.bin.zip", "size": 250_000, "seed": 5}}
    ingest_world(world(messages=[big], limits=limits))
    plan = package_services.upload_plan

    def overlapping_parts(*, volumes, limit):
        # An off-by-one in the byte ranges: part 2 starts one byte early.
        parts = plan(volumes=volumes, limit=limit)
        second = parts[1]
        parts[1] = package_services.UploadPart(second.name, second.volume_index, second.offset - 1, second.length)
        return parts

    monkeypatch.setattr(package_services, "upload_plan", overlapping_parts)

    run = run_cycle()

    assert run.status == RunStatus.PARTIAL and run.skipped == 1
    assert not uploads(), "nothing is uploaded from parts that do not re-join"
    skipped = SkippedPackage.objects.get()
    assert skipped.reason == SkipReason.UPLOAD_FAILED and "re-join" in skipped.error_message
    notification = Notification.objects.get(type="split_mismatch")
    assert notification.title == "Splitting big.bin.zip for upload went wrong"
    assert "re-join" in notification.message


def test_an_upload_gone_from_the_destination_raises_a_notification(ingest_world, sandbox):
    loaded = ingest_world(world(messages=[ZIP]))
    run_cycle()
    package = Package.objects.get()
    with loaded.transaction() as conn:
        conn.execute(
            "UPDATE messages SET deleted = 1 WHERE chat_id = ? AND id = ?", (DESTINATION, package.dest_message_ids[0])
        )

    assert packages_check_destination() == 1

    notification = Notification.objects.get(type="destination_messages_gone")
    assert notification.title == "1 upload vanished from the destination"
    assert "dragon.zip" in notification.message and notification.severity == "warning"


def test_a_clean_cycle_raises_nothing(ingest_world):
    ingest_world(world(messages=[ZIP]))

    run = run_cycle()

    assert run.status == RunStatus.SUCCESS and run.ingested == 1
    assert not Notification.objects.exists()
