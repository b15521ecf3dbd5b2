"""The dashboard leads with what needs a person, each with its action; notifications resolve themselves when
their cause is gone (a resumed or canceled run, an account logged in again, a channel read again)."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from accounts.models import AuthState, TelegramAccount
from accounts.services import account_store_login
from core.models import Notification, RunStatus
from core.notifications import notification_raise, notifications_resolve
from core.selectors import notifications_unread_count
from ingestion.models import IngestionRun, SkippedPackage, SkipReason
from ingestion.notifications import notify_account_unusable, notify_channel_unreachable
from ingestion.services import channel_error_clear, channel_error_record
from reminders.models import ReminderRun
from telegram.records import AccountInfo
from tests.support import factories, reminders
from tests.support.reminders import groups_world

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_pace", "fresh_buckets")]


@pytest.fixture
def paused_run(fanout_world, at, enqueued) -> ReminderRun:
    """A real run of 10 groups, paused by its window after 4; its notification is unread."""
    fanout_world(groups_world(groups=10))
    run = reminders.paused_run(at)
    assert (run.status, run.sent, run.pending) == (RunStatus.PAUSED, 4, 6)
    enqueued.clear()
    return run


def htmx_post(client, url, data=None):
    return client.post(url, data or {}, HTTP_HX_REQUEST="true")


def test_nothing_to_do_says_all_is_well(admin_client):
    page = admin_client.get(reverse("dashboard")).content.decode()
    assert "All is well" in page
    assert "Needs attention" not in page


def test_resume_from_the_dashboard_queues_the_run_and_its_notification_resolves(
    admin_client, paused_run, enqueued, django_capture_on_commit_callbacks
):
    assert Notification.objects.filter(subject=f"reminder-run:{paused_run.pk}", read_at__isnull=True).count() == 1
    page = admin_client.get(reverse("dashboard")).content.decode()
    assert "Needs attention" in page
    assert "Flash sale" in page and "4 of 10 groups delivered, 6 pending" in page
    assert f'aria-label="Resume run #{paused_run.pk}"' in page and f'aria-label="Cancel run #{paused_run.pk}"' in page
    before = notifications_unread_count()

    with django_capture_on_commit_callbacks(execute=True):
        answer = htmx_post(admin_client, reverse("attention-run-resume", args=[paused_run.pk])).content.decode()

    assert f"Flash sale run #{paused_run.pk}: resumed, 6 groups to go." in answer
    assert "All is well" in answer  # the run left the list
    assert 'id="bell-count"' in answer and 'hx-swap-oob="true"' in answer
    assert enqueued == [paused_run.pk]
    assert ReminderRun.objects.get(pk=paused_run.pk).status == RunStatus.QUEUED
    notification = Notification.objects.get(subject=f"reminder-run:{paused_run.pk}")
    assert notification.resolved_at is not None and notification.read_at is not None
    assert notifications_unread_count() == before - 1


def test_cancel_from_the_dashboard_ends_the_run_and_raises_nothing_new(admin_client, paused_run):
    answer = htmx_post(admin_client, reverse("attention-run-cancel", args=[paused_run.pk])).content.decode()

    assert "canceled, 6 groups skipped" in answer
    run = ReminderRun.objects.get(pk=paused_run.pk)
    assert run.status == RunStatus.PARTIAL and run.skipped == 6
    assert not Notification.objects.filter(subject=f"reminder-run:{paused_run.pk}", read_at__isnull=True).exists()


def test_resuming_a_run_that_is_no_longer_paused_says_why(admin_client, paused_run):
    htmx_post(admin_client, reverse("attention-run-cancel", args=[paused_run.pk]))
    answer = htmx_post(admin_client, reverse("attention-run-resume", args=[paused_run.pk])).content.decode()
    assert "alert--error" in answer and "only a paused or failed run can be resumed" in answer


def test_viewers_see_the_list_without_its_buttons(client, django_user_model, paused_run):
    client.force_login(django_user_model.objects.create_user(username="viewer", password="x-pass-123"))
    page = client.get(reverse("dashboard")).content.decode()
    assert "Flash sale" in page
    assert f"Resume run #{paused_run.pk}" not in page
    assert client.post(reverse("attention-run-resume", args=[paused_run.pk])).status_code == 403


def _skipped(channel, message_id: int, reason: str, name: str) -> SkippedPackage:
    return SkippedPackage.objects.create(
        channel=channel, message_id=message_id, message_ids=[message_id], file_name=name, reason=reason
    )


def test_skipped_packages_are_grouped_by_reason_and_waiting_sets_need_no_one(admin_client):
    channel = factories.channel("Models A", is_active=True)
    _skipped(channel, 10, SkipReason.SIZE_LIMIT, "huge.zip")
    _skipped(channel, 11, SkipReason.SIZE_LIMIT, "huger.zip")
    _skipped(channel, 12, SkipReason.DOWNLOAD_FAILED, "broken.rar")
    _skipped(channel, 13, SkipReason.WAITING_FOR_VOLUMES, "set.7z.001")

    page = admin_client.get(reverse("dashboard")).content.decode()

    assert "2 skipped packages" in page and "1 skipped package<" in page
    assert 'aria-label="Retry all too large"' in page and 'aria-label="Retry all download failed"' in page
    assert "set.7z.001" not in page and "Waiting for volumes" not in page

    response = admin_client.post(reverse("ingestion:skipped-retry-all"), {"reason": SkipReason.SIZE_LIMIT})
    assert response.status_code == 302
    assert set(SkippedPackage.objects.values_list("file_name", flat=True)) == {"broken.rar", "set.7z.001"}


def test_accounts_failing_channels_and_stuck_runs_each_come_with_their_action(admin_client, settings):
    expired = factories.account("+15550001111", auth_state=AuthState.EXPIRED, last_error="SESSION_REVOKED")
    reader = factories.account("+15550002222", auth_state=AuthState.AUTHENTICATED, is_active=True)
    channel = factories.channel("Makers", member=reader, is_active=True, last_error="+15550002222: CHANNEL_PRIVATE")
    quiet = timezone.now() - timedelta(seconds=settings.WORK_STALE_AFTER_SECONDS + 60)
    stuck = IngestionRun.objects.create(
        account=reader, status=RunStatus.RUNNING, worker_id="gone@host", claimed_at=quiet, heartbeat_at=quiet
    )

    page = admin_client.get(reverse("dashboard")).content.decode()

    assert expired.phone in page and "Log in again" in page and "SESSION_REVOKED" in page
    assert "Makers" in page and "CHANNEL_PRIVATE" in page
    assert reverse("ingestion:channel-ingest-now", args=[channel.pk]) in page
    assert f"Ingestion run #{stuck.pk}" in page and "Re-queue stuck runs" in page

    answer = htmx_post(admin_client, reverse("attention-runs-requeue")).content.decode()

    assert "Re-queued 1 stuck run." in answer
    stuck.refresh_from_db()
    assert stuck.status == RunStatus.QUEUED and stuck.requeue_count == 1
    assert f"Ingestion run #{stuck.pk}" not in answer.split('id="bell-count"')[0]


# Notifications resolve themselves ----------------------------------------------------------------------------


def test_resolve_marks_only_the_unread_ones_of_that_subject_and_types():
    def raise_one(type, subject):
        return notification_raise(type=type, severity="error", title=type, message="", subject=subject)

    raise_one("channel_unreachable", "channel:1")
    raise_one("other_trouble", "channel:1")
    raise_one("channel_unreachable", "channel:2")

    assert notifications_resolve(subject="channel:1", types=["channel_unreachable"]) == 1
    assert notifications_resolve(subject="channel:1") == 1
    assert notifications_resolve(subject="channel:1") == 0
    assert list(Notification.objects.filter(read_at__isnull=True).values_list("subject", flat=True)) == ["channel:2"]
    # Raised again after it resolved: a new notification, not the old one bumped.
    raise_one("channel_unreachable", "channel:1")
    assert Notification.objects.filter(subject="channel:1").count() == 3


def test_an_account_logged_in_again_resolves_its_notification(admin_client):
    account = factories.account("+15550003333", auth_state=AuthState.EXPIRED, last_error="AUTH_KEY_UNREGISTERED")
    notify_account_unusable(account=account)
    assert notifications_unread_count() == 1

    account_store_login(
        account=account, info=AccountInfo(user_id=7, phone=account.phone, first_name="Ops"), session="s"
    )

    assert TelegramAccount.objects.get(pk=account.pk).auth_state == AuthState.AUTHENTICATED
    assert notifications_unread_count() == 0
    assert "resolved by itself" in admin_client.get(reverse("notifications")).content.decode()


def test_a_channel_read_again_resolves_its_notification():
    reader = factories.account("+15550004444", auth_state=AuthState.AUTHENTICATED)
    channel = factories.channel("Makers", member=reader, is_active=True)
    channel_error_record(channel=channel, account=reader, error="CHANNEL_PRIVATE")
    notify_channel_unreachable(channel=channel, account=reader, error="CHANNEL_PRIVATE")
    assert notifications_unread_count() == 1

    channel_error_clear(channel=channel)

    assert notifications_unread_count() == 0
