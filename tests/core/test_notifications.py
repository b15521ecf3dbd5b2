"""Notifications: raising with 24-hour de-duplication, reading, the bell, the page and the API."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from core.models import Notification, RunStatus
from core.notifications import DEDUPE_WINDOW, notification_raise, notifications_mark_all_read, notifications_purge
from core.runs import runs_reap
from core.tokens import api_token_create
from tests.claimtest.models import ProbeRun

pytestmark = pytest.mark.django_db


def raise_one(**overrides) -> Notification:
    fields = {
        "type": "channel_unreachable",
        "severity": "error",
        "title": "Channel Models A is unreachable",
        "message": "Reader A: CHANNEL_PRIVATE",
        "subject": "channel:1",
    }
    return notification_raise(**(fields | overrides))


def test_a_repeat_within_24_hours_bumps_the_unread_one():
    first = raise_one(context={"attempt": 1})
    again = raise_one(message="Reader A: still private", context={"attempt": 2}, severity="warning")

    assert again.pk == first.pk and Notification.objects.count() == 1
    again.refresh_from_db()
    assert again.count == 2
    assert (again.message, again.context, again.severity) == ("Reader A: still private", {"attempt": 2}, "warning")
    assert again.last_raised_at > again.created_at


def test_other_subjects_and_types_are_separate():
    raise_one()
    raise_one(subject="channel:2")
    raise_one(type="account_unusable")

    assert Notification.objects.count() == 3


def test_after_24_hours_a_repeat_is_a_new_notification():
    first = raise_one()
    Notification.objects.filter(pk=first.pk).update(created_at=timezone.now() - DEDUPE_WINDOW - timedelta(seconds=1))

    second = raise_one()

    assert second.pk != first.pk and second.count == 1
    assert Notification.objects.get(pk=first.pk).count == 1


def test_a_repeat_after_it_was_read_is_new_and_unread():
    first = raise_one()
    notifications_mark_all_read()

    second = raise_one()

    assert second.pk != first.pk and second.read_at is None


def test_bad_severity_or_missing_subject_is_refused():
    with pytest.raises(ValueError, match="severity"):
        raise_one(severity="fatal")
    with pytest.raises(ValueError, match="subject"):
        raise_one(subject="")
    assert not Notification.objects.exists()


def test_purge_deletes_only_old_read_notifications():
    old_read = raise_one(subject="a")
    old_unread = raise_one(subject="b")
    fresh_read = raise_one(subject="c")
    long_ago = timezone.now() - timedelta(days=40)
    Notification.objects.filter(pk__in=[old_read.pk, old_unread.pk]).update(last_raised_at=long_ago)
    Notification.objects.filter(pk__in=[old_read.pk, fresh_read.pk]).update(read_at=timezone.now())

    assert notifications_purge(older_than=timedelta(days=30)) == 1
    assert set(Notification.objects.values_list("subject", flat=True)) == {"b", "c"}


# Pages -----------------------------------------------------------------------------------------------------


def test_the_bell_shows_the_unread_count_and_polls(admin_client):
    raise_one(subject="a")
    raise_one(subject="b")

    html = admin_client.get(reverse("dashboard")).content.decode()
    bell = admin_client.get(reverse("notifications-bell")).content.decode()

    assert 'id="bell-count"' in html and ">2<span" in html
    assert 'hx-get="/notifications/bell/"' in bell and 'hx-trigger="every 30s"' in bell and ">2<span" in bell
    assert "hx-swap-oob" not in bell


def test_the_bell_hides_its_count_when_nothing_is_unread(admin_client):
    bell = admin_client.get(reverse("notifications-bell")).content.decode()

    assert "bell-count is-zero" in bell


def test_the_panel_lists_unread_first_and_updates_the_count(admin_client):
    read = raise_one(subject="a", title="Old news")
    notifications_mark_all_read()
    raise_one(subject="b", title="Fresh trouble")
    Notification.objects.filter(pk=read.pk).update(last_raised_at=timezone.now() + timedelta(minutes=1))

    html = admin_client.get(reverse("notifications-panel"), headers={"HX-Request": "true"}).content.decode()

    assert html.index("Fresh trouble") < html.index("Old news")
    assert 'id="bell-count"' in html and 'hx-swap-oob="true"' in html
    assert "Mark all read" in html


def test_mark_read_with_htmx_returns_the_item_and_the_new_count(admin_client):
    first = raise_one(subject="a")
    raise_one(subject="b")

    response = admin_client.post(reverse("notifications-mark-read", args=[first.pk]), headers={"HX-Request": "true"})

    html = response.content.decode()
    assert response.status_code == 200
    assert f'id="notification-{first.pk}"' in html and "is-read" in html
    assert 'hx-swap-oob="true"' in html and ">1<span" in html
    first.refresh_from_db()
    assert first.read_at is not None


def test_mark_read_without_htmx_goes_back(admin_client):
    first = raise_one()

    response = admin_client.post(
        reverse("notifications-mark-read", args=[first.pk]), {"next": "/notifications/?unread=1"}
    )

    assert response.status_code == 302 and response.url == "/notifications/?unread=1"
    assert Notification.objects.get().read_at is not None


def test_mark_read_refuses_another_site_as_next(admin_client):
    first = raise_one()

    response = admin_client.post(reverse("notifications-mark-read", args=[first.pk]), {"next": "https://evil.example/"})

    assert response.url == reverse("notifications")


def test_mark_all_read_from_the_page(admin_client):
    raise_one(subject="a")
    raise_one(subject="b")

    response = admin_client.post(reverse("notifications-mark-all-read"))

    assert response.status_code == 302
    assert not Notification.objects.filter(read_at__isnull=True).exists()


def test_the_page_lists_and_filters_unread(admin_client):
    raise_one(subject="a", title="Read already")
    notifications_mark_all_read()
    raise_one(subject="b", title="Still unread")
    raise_one(subject="b", title="Still unread")

    every = admin_client.get(reverse("notifications")).content.decode()
    unread = admin_client.get(reverse("notifications") + "?unread=1").content.decode()

    assert "Read already" in every and "Still unread" in every and "×2" in every
    assert "Read already" not in unread and "Still unread" in unread


def test_notification_pages_need_a_login(client):
    first = raise_one()
    for url in (reverse("notifications"), reverse("notifications-bell"), reverse("notifications-panel")):
        assert client.get(url).status_code == 302
    assert client.post(reverse("notifications-mark-read", args=[first.pk])).status_code == 302
    assert Notification.objects.get().read_at is None


# API -------------------------------------------------------------------------------------------------------


def test_api_lists_filters_and_marks_read(admin_client):
    first = raise_one(subject="a")
    raise_one(subject="b")
    notification_raise(type="t", severity="info", title="Read", message="", subject="c")
    admin_client.post(reverse("notifications-mark-read", args=[Notification.objects.get(subject="c").pk]))

    listed = admin_client.get("/api/notifications/").json()
    unread = admin_client.get("/api/notifications/?unread=1").json()

    assert listed["count"] == 3 and unread["count"] == 2
    item = next(row for row in listed["results"] if row["id"] == first.pk)
    assert {"type", "severity", "title", "message", "context", "subject", "url", "count", "is_read"} <= set(item)

    marked = admin_client.post(f"/api/notifications/{first.pk}/read/").json()
    assert marked["is_read"] is True and marked["read_at"]
    assert admin_client.post("/api/notifications/read-all/").json() == {"marked": 1}
    assert admin_client.get("/api/notifications/?unread=1").json()["count"] == 0


def test_api_takes_an_operator_token_and_refuses_strangers(client, admin_user):
    raise_one()
    _, token = api_token_create(owner=admin_user, name="script", scope="read")

    assert client.get("/api/notifications/").status_code in (401, 403)
    assert client.get("/api/notifications/", headers={"Authorization": f"Token {token}"}).status_code == 200


# Raised by the reaper --------------------------------------------------------------------------------------


def test_the_reaper_raises_a_warning_for_a_requeued_run_and_an_error_for_a_failed_one():
    stale_at = timezone.now() - timedelta(minutes=10)
    stale = ProbeRun.objects.create(status=RunStatus.RUNNING, worker_id="gone-1-1", heartbeat_at=stale_at)
    worn_out = ProbeRun.objects.create(
        status=RunStatus.RUNNING, worker_id="gone-2-1", heartbeat_at=stale_at, requeue_count=3
    )

    runs_reap(model=ProbeRun, stale_after=timedelta(minutes=5), max_requeues=3)

    requeued = Notification.objects.get(subject=f"claimtest.proberun:{stale.pk}")
    failed = Notification.objects.get(subject=f"claimtest.proberun:{worn_out.pk}")
    assert (requeued.type, requeued.severity) == ("run_requeued", "warning")
    assert "gone-1-1" in requeued.message and requeued.url == reverse("operations")
    assert (failed.type, failed.severity) == ("run_failed", "error")
    assert "re-queued 3 times" in failed.message
