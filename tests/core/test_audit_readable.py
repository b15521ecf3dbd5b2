"""An audit trail people read: one entry per action, in words; requests that change nothing leave none; kinds in
words; filters that filter; a login's role, not its groups; a task's many rows folded into one short entry."""

import pytest
from django.test import Client
from django.urls import reverse

from core.audit import audit_task_finished, audit_task_started
from core.models import AuditChange, AuditEntry, Notification
from tests.support.pages import HTMX

pytestmark = pytest.mark.django_db(transaction=True)


def test_compose_keystrokes_and_estimates_leave_no_entry(operator):
    for typed in ("H", "He", "Hello"):
        operator.post(reverse("reminders:compose"), {"step": "message", "text": typed}, **HTMX)
        operator.post(reverse("reminders:eta"), {"text": typed}, **HTMX)
    assert list(AuditEntry.objects.values_list("action", flat=True)) == []


def test_a_form_sent_back_with_its_errors_leaves_no_entry(operator):
    response = operator.post(
        reverse("people-add"), {"username": "", "role": "viewer", "how": "password", "expires_in_days": 7}
    )
    assert response.status_code in (200, 400)
    assert not AuditEntry.objects.exists()


def test_a_viewer_added_reads_role_viewer_not_a_groups_diff(operator):
    operator.post(reverse("people-add"), {"username": "vic", "role": "viewer", "how": "password", "expires_in_days": 7})
    entry = AuditEntry.objects.get()
    login = entry.changes.get(kind="auth.User", object_repr="vic")
    assert login.operation == "created"
    assert login.fields["role"] == [None, "viewer"]
    assert "groups" not in str(list(entry.changes.values_list("fields", flat=True)))
    assert entry.summary.startswith("operator ") and "vic" in entry.summary
    page = operator.get(reverse("audit")).content.decode()
    assert "role: viewer" in page and "Operators" not in page


def test_a_role_change_reads_from_role_to_role(operator, django_user_model):
    vic = django_user_model.objects.create_user(username="vic", password="pw-long-enough")
    operator.post(reverse("people-role", args=[vic.pk]), {"role": "operator"})
    change = AuditChange.objects.get(kind="auth.User", object_id=str(vic.pk))
    assert change.fields == {"role": ["viewer", "operator"]}


def test_filtering_by_a_person_shows_only_theirs(operator):
    for actor in ("vera", "system", "veronica", "vera's token 'backup script'", "olga's token 'vera mirror'"):
        AuditEntry.objects.create(actor=actor, via="page", action=f"POST x by {actor}", summary=f"{actor} did x")
    found = {entry["actor"] for entry in operator.get("/api/audit/", {"actor": "vera"}).json()["results"]}
    assert found == {"vera", "vera's token 'backup script'", "olga's token 'vera mirror'"}
    page = operator.get(reverse("audit"), {"actor": "vera"}).content.decode()
    assert "system did x" not in page and "veronica did x" not in page and "vera did x" in page


def test_kinds_are_offered_in_words(operator):
    entry = AuditEntry.objects.create(actor="vera", via="page", action="POST x")
    AuditChange.objects.create(
        entry=entry, kind="core.Notification", object_id="1", object_repr="Disk", operation="changed"
    )
    page = operator.get(reverse("audit")).content.decode()
    assert ">Notification</option>" in page and ">core.Notification<" not in page
    assert operator.get("/api/audit/", {"kind": "notification"}).json()["count"] == 1


def test_a_task_touching_many_rows_is_one_entry_counted_in_words(operator, settings):
    settings.AUDIT_MAX_CHANGES = 50
    audit_task_started(task_id="t-many", task_name="core.tasks.notifications_example")
    for number in range(120):
        Notification.objects.create(type="t", severity="info", title=f"n{number}", subject=f"s{number}")
    audit_task_finished(task_id="t-many")
    entry = AuditEntry.objects.get()
    assert entry.summary == "Task “notifications example”: 120 notifications created"
    page = operator.get(reverse("audit")).content.decode()
    assert page.count('class="audit-detail') == 1, "one entry, its rows behind a click"
    listed = page.split('class="audit-detail', 1)[1]
    assert listed.count("Created notification") == 20, "the detail lists the first rows, the API all it keeps"


def test_a_write_refused_for_who_sent_it_is_told_in_words(django_user_model):
    viewer = Client()
    viewer.force_login(django_user_model.objects.create_user(username="vic", password="pw-long-enough"))
    viewer.post("/notifications/read-all/")
    assert AuditEntry.objects.get().summary == "vic was refused (403): notifications mark all read"


def test_rows_added_to_a_relation_one_by_one_are_told_together():
    from ingestion.models import IngestionRun
    from packages.models import Package
    from tests.support.factories import account

    run = IngestionRun.objects.create(account=account(), trigger="command")
    packages = [
        Package.objects.create(content_hash=f"{n:064d}", file_name=f"set-{n}.zip", file_size=1, archive_type="zip")
        for n in range(3)
    ]
    audit_task_started(task_id="t-relation", task_name="ingestion.tasks.example")
    for package in packages:
        run.packages.add(package)
    audit_task_finished(task_id="t-relation")
    change = AuditChange.objects.get(kind="ingestion.IngestionRun")
    assert change.fields == {"packages": [[], ["set-0.zip", "set-1.zip", "set-2.zip"]]}
