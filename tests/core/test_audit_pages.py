"""The Audit page, its API, and an object's own history on its page."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from core.models import AuditChange, AuditEntry, RunStatus
from packages.models import Package
from reminders.models import ReminderRun
from reminders.services import reminder_fire
from tests.support.pages import HTMX
from tests.support.reminders import KL, KL_AFTER_CLOSE, KL_MORNING, execute, groups_world, make_reminder

pytestmark = pytest.mark.django_db(transaction=True)


def _entry(actor: str, action: str, *, kind: str = "", object_id: str = "", address: str = "203.0.113.9"):
    entry = AuditEntry.objects.create(
        actor=actor, via="page", action=action, summary=f"{actor} did {action}", address=address, status_code=302
    )
    if kind:
        AuditChange.objects.create(entry=entry, kind=kind, object_id=object_id, object_repr="x", operation="changed")
    return entry


@pytest.fixture
def viewer(django_user_model):
    client = APIClient()
    client.force_login(django_user_model.objects.create_user(username="vera", password="pw-long-enough"))
    return client


def test_the_page_filters_by_person_kind_object_and_time(operator):
    _entry("alice", "POST reminders:activity-cancel", kind="reminders.ReminderRun", object_id="7")
    _entry("bob", "POST packages:edit", kind="packages.Package", object_id="3")
    page = operator.get(reverse("audit")).content.decode()
    assert "POST reminders:activity-cancel" in page and "POST packages:edit" in page
    assert "203.0.113.9" in page, "operators see where a change came from"

    alice = operator.get(reverse("audit"), {"actor": "alice"}).content.decode()
    assert "activity-cancel" in alice and "packages:edit" not in alice
    run_7 = operator.get(reverse("audit"), {"kind": "ReminderRun", "object_id": "7"}, **HTMX).content.decode()
    assert "activity-cancel" in run_7 and "packages:edit" not in run_7
    assert "<html" not in run_7, "HTMX gets the table alone"
    later = operator.get(reverse("audit"), {"since": "2999-01-01T00:00"}).content.decode()
    assert "activity-cancel" not in later and "Nothing recorded" in later


def test_viewers_read_the_trail_without_addresses(viewer):
    _entry("alice", "POST reminders:activity-cancel")
    page = viewer.get(reverse("audit")).content.decode()
    assert "activity-cancel" in page and "203.0.113.9" not in page
    api = viewer.get("/api/audit/").json()
    assert api["results"][0]["actor"] == "alice" and api["results"][0]["address"] is None


def test_the_api_filters_and_says_what_is_wrong_with_a_filter(api):
    _entry("alice", "POST x", kind="reminders.ReminderRun", object_id="7")
    _entry("bob", "POST y")
    found = api.get("/api/audit/", {"actor": "alice"}).json()["results"]
    assert [(e["actor"], e["address"], e["changes"][0]["object_id"]) for e in found] == [("alice", "203.0.113.9", "7")]
    bad = api.get("/api/audit/", {"since": "yesterday-ish"})
    assert bad.status_code == 400 and "date/time" in bad.json()["message"].lower()


def test_a_run_page_shows_who_cancelled_it(fanout_world, at, operator):
    fanout_world(groups_world(groups=4))
    reminder = make_reminder(timezone=KL, start=9, end=18, name="Black Friday")
    at(KL_MORNING)
    run = reminder_fire(reminder=reminder)
    at(KL_MORNING, then=KL_AFTER_CLOSE, after=2)
    run = execute(run)
    assert run.status == RunStatus.PAUSED

    operator.post(reverse("reminders:activity-cancel", args=[run.pk]))
    assert ReminderRun.objects.get(pk=run.pk).status != RunStatus.PAUSED
    page = operator.get(reverse("reminders:activity-run", args=[run.pk])).content.decode()
    history = page[page.index('id="audit-history-title"') :]
    assert f"operator cancelled Black Friday run #{run.pk}" in history
    assert "POST reminders:activity-cancel" not in history, "in words, not the route's name"


def test_a_package_page_shows_its_history(operator):
    package = Package.objects.create(content_hash="a" * 64, file_name="models.zip", file_size=1, archive_type="zip")
    entry = _entry("alice", "POST packages:edit", kind="packages.Package", object_id=str(package.pk))
    page = operator.get(reverse("packages:detail", args=[package.pk])).content.decode()
    history = page[page.index('id="audit-history-title"') :]
    assert entry.actor in history and "POST packages:edit" in history
