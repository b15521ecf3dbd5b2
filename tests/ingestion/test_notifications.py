"""Ingestion failures raise notifications (ingestion/notifications.py, called from the pipeline and recovery)."""

import pytest
from django.urls import reverse

from accounts.models import AccountChat, AuthState, TelegramAccount
from core.models import Notification, RunStatus
from ingestion.models import AccountChannelMap, Channel, MapRole
from ingestion.recovery import packages_check_destination
from packages import services as package_services
from packages.models import Package
from tests.ingestion.conftest import DESTINATION, READER, SOURCE, run_cycle, world

pytestmark = pytest.mark.django_db

ZIP = {"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}}


@pytest.fixture(autouse=True)
def storage(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"


def test_a_channel_that_became_private_raises_one_notification_per_day(ingest_world):
    ingest_world(world(messages=[ZIP]))
    # The account's access hash no longer opens the channel: Telegram answers CHANNEL_PRIVATE.
    AccountChat.objects.filter(account__phone=READER, chat__telegram_id=SOURCE).update(access_hash=1)

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


def test_a_restricted_account_raises_a_notification(ingest_world):
    ingest_world(
        world(messages=[ZIP], faults=[{"op": "history", "account": READER, "error": "peer_flood", "times": 5}])
    )

    run = run_cycle()

    assert run.status == RunStatus.FAILED
    account = TelegramAccount.objects.get(phone=READER)
    assert account.auth_state == AuthState.RESTRICTED
    notification = Notification.objects.get(type="account_unusable")
    assert notification.subject == f"account:{account.pk}"
    assert notification.title == "Account Reader A was restricted by Telegram"
    assert notification.url == reverse("accounts:list")


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


def test_a_split_that_goes_wrong_raises_a_notification(ingest_world, monkeypatch):
    limits = {"upload_max_bytes": 100_000, "premium_upload_max_bytes": 400_000}
    big = {"id": 11, "document": {"name": "big.bin.zip", "size": 250_000, "seed": 5}}
    ingest_world(world(messages=[big], limits=limits))

    def short_read(*, source, part, target):
        raise package_services.SplitMismatch(f"{source.name} ended 10 bytes early while writing {part.name}")

    monkeypatch.setattr(package_services, "part_write", short_read)

    run = run_cycle()

    assert run.status == RunStatus.FAILED
    notification = Notification.objects.get(type="split_mismatch")
    assert notification.title == "Splitting big.bin.zip.001 for upload went wrong"
    assert "ended 10 bytes early" in notification.message


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
