"""The Operations page, its alerts, and the notification bell, in Chromium."""

from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from accounts.models import AuthState, Chat, TelegramAccount
from core import health
from core.models import RunStatus
from core.notifications import notification_raise, notifications_mark_all_read
from ingestion.models import Channel, IngestionRun, SkippedPackage, SkipReason
from operations import metrics
from packages.models import Package

pytestmark = pytest.mark.browser


@pytest.fixture
def broker():
    client = health.broker_client()
    keys = [*metrics.QUEUES, health.BEAT_KEY]
    client.delete(*keys)
    yield client
    client.delete(*keys)


def seed(broker) -> None:
    now = timezone.now()
    reader = TelegramAccount.objects.create(
        phone="+15550000001", display_name="Reader A", auth_state=AuthState.AUTHENTICATED
    )
    TelegramAccount.objects.create(phone="+15550000002", display_name="Reader B", auth_state=AuthState.AUTHENTICATED)
    TelegramAccount.objects.create(
        phone="+15550000003", display_name="Old Olga", auth_state=AuthState.EXPIRED, last_error="SESSION_REVOKED"
    )
    chat = Chat.objects.create(telegram_id=1001, title="Models A", type="channel")
    channel = Channel.objects.create(chat=chat, is_active=True, last_error="Reader A: CHANNEL_PRIVATE")
    for day in range(14):
        for index in range((day * 7) % 5 + (3 if day == 13 else 0)):
            Package.objects.create(
                content_hash=f"{day:032d}{index:032d}",
                file_name=f"set-{day}-{index}.zip",
                file_size=1000,
                archive_type="zip",
                created_at=now - timedelta(days=13 - day, hours=1),
            )
    reasons = [SkipReason.MISSING_PART] * 4 + [SkipReason.DOWNLOAD_FAILED] * 2 + [SkipReason.NEEDS_PASSWORD]
    for message_id, reason in enumerate(reasons, start=1):
        SkippedPackage.objects.create(channel=channel, message_id=message_id, file_name="x.zip", reason=reason)
    for claimed, took, status in [(3600, 240, RunStatus.SUCCESS), (7200, 420, RunStatus.PARTIAL)]:
        run = IngestionRun.objects.create(account=reader, status=status)
        start = now - timedelta(seconds=claimed)
        IngestionRun.objects.filter(pk=run.pk).update(
            claimed_at=start, heartbeat_at=start, finished_at=start + timedelta(seconds=took)
        )
    running = IngestionRun.objects.create(account=reader, status=RunStatus.RUNNING)
    IngestionRun.objects.filter(pk=running.pk).update(claimed_at=now - timedelta(minutes=3), heartbeat_at=now)
    IngestionRun.objects.create(account=reader, status=RunStatus.QUEUED)
    broker.rpush("ingest", *["task"] * 4)
    broker.rpush("default", "task")
    health.beat_tick()

    notification_raise(
        type="run_requeued",
        severity="warning",
        title="Ingestion run #7 re-queued after its worker went quiet",
        message="Re-queued after worker web-1-123 stopped answering.",
        subject="ingestion.ingestionrun:7",
    )
    notifications_mark_all_read()
    notification_raise(
        type="destination_messages_gone",
        severity="warning",
        title="2 uploads vanished from the destination",
        message="dragon.zip, bust.stl: the destination message is gone, so the next cycle uploads them again.",
        subject="destination",
        url="/channels/",
    )
    for _ in range(3):
        notification_raise(
            type="channel_unreachable",
            severity="error",
            title="Channel Models A is unreachable",
            message="Reader A could not read it: Chat 1001 is private to this account. It is tried again next cycle.",
            subject=f"channel:{channel.pk}",
            url=f"/channels/{channel.pk}/",
        )


def test_operations_page_alerts_and_the_bell(
    live_server, transactional_db, admin_client, page, artifacts, broker, settings
):
    settings.ALERT_QUEUE_BACKLOG = 3
    seed(broker)
    session_cookie = admin_client.cookies["sessionid"]
    page.context.add_cookies([{"name": "sessionid", "value": session_cookie.value, "url": live_server.url}])

    page.goto(f"{live_server.url}/")
    expect(page.locator(".alert-banner", has_text="4 tasks waiting in the ingest queue")).to_be_visible()
    expect(page.get_by_role("link", name="Open Flower")).to_be_visible()
    page.screenshot(path=artifacts / "dashboard-alerts.png", full_page=True)

    page.get_by_role("navigation", name="Main").get_by_role("link", name="Operations").click()
    expect(page.get_by_role("heading", name="Operations")).to_be_visible()
    runs = page.locator('tr[data-kind="ingestion_run"]')
    expect(runs.locator("td").nth(0)).to_contain_text("1")  # queued
    expect(runs.locator("td").nth(6)).to_have_text("5 min")  # average of 4 and 7 minutes
    expect(page.locator('[data-queue="ingest"] .bar-value')).to_have_text("4")
    expect(page.locator(".alert-banner", has_text="Account Old Olga needs a new login")).to_be_visible()
    expect(page.locator(".alert-banner", has_text="Channel Models A is unreachable")).to_be_visible()
    expect(page.locator(".health-item", has_text="Beat")).to_contain_text("ok")
    page.screenshot(path=artifacts / "operations.png", full_page=True)

    bell_count = page.locator("#bell-count")
    expect(bell_count).to_have_text("2 unread")
    page.locator(".bell summary").click()
    panel = page.locator(".bell-panel")
    expect(panel.locator(".notification")).to_have_count(3)
    expect(panel.locator(".notification").first).to_contain_text("Channel Models A is unreachable")
    expect(panel.locator(".notification").first.locator(".badge--count")).to_have_text("×3")
    page.screenshot(path=artifacts / "notifications-bell.png")

    panel.locator(".notification").first.get_by_role("button", name="Mark read").click()
    expect(bell_count).to_have_text("1 unread")
    expect(panel.locator(".notification.is-read")).to_have_count(2)

    panel.get_by_role("button", name="Mark all read").click()
    expect(bell_count).to_be_hidden()
    page.keyboard.press("Escape")
    expect(panel).to_be_hidden()

    notification_raise(
        type="account_unusable",
        severity="error",
        title="Account Old Olga needs a new login",
        message="SESSION_REVOKED Its Telegram session expired or was revoked; log it in again on the Accounts page.",
        subject="account:3",
        url="/accounts/",
    )
    page.goto(f"{live_server.url}/notifications/")
    expect(page.locator(".notification")).to_have_count(4)
    expect(bell_count).to_have_text("1 unread")
    page.screenshot(path=artifacts / "notifications-page.png", full_page=True)
    page.locator(".notification", has_text="Old Olga").get_by_role("button", name="Mark read").click()
    expect(bell_count).to_be_hidden()
    expect(page.locator(".notification.is-read")).to_have_count(4)
