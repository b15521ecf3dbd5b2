"""The audit trail from real processes: a management command and a Celery task act as the system."""

from datetime import timedelta

import pytest
from django.utils import timezone

from config.celery_app import app
from core import task_names
from core.audit import HIDDEN
from core.models import AuditEntry, Notification
from tests.support.processes import purge_queues, start_celery_worker, start_program, stop, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]


def test_a_management_command_is_recorded_as_the_system_without_the_password_it_printed(storage, sandbox):
    sandbox({"accounts": [], "chats": []})
    program = start_program(["manage.py", "create_login", "vera", "--role", "viewer"])
    out, err = program.communicate(timeout=120)
    assert program.returncode == 0, err
    password = out.strip().rsplit(" / ", 1)[1]
    entry = AuditEntry.objects.get()
    assert (entry.actor, entry.via, entry.action) == ("system", "command", "command create_login")
    user = entry.changes.get(kind="auth.User", operation="created")  # its role (groups) is a change of its own
    assert user.fields["username"] == [None, "vera"]
    assert user.fields["password"] == [None, HIDDEN]
    assert password not in str(list(entry.changes.values_list("fields", flat=True)))


def test_a_task_run_by_a_worker_is_recorded_as_the_system(storage, sandbox, tmp_path):
    sandbox({"accounts": [], "chats": []})
    old = timezone.now() - timedelta(days=400)
    gone = Notification.objects.create(
        type="t", severity="info", title="Old news", subject="s", read_at=old, last_raised_at=old
    )
    purge_queues()
    worker = start_celery_worker(tmp_path, queues="default")
    try:
        app.send_task(task_names.NOTIFICATIONS_PURGE, queue="default")
        entry = wait_for(lambda: AuditEntry.objects.first(), timeout=90, what="the purge's audit entry")
    finally:
        stop(worker)
    assert (entry.actor, entry.via, entry.action) == ("system", "task", f"task {task_names.NOTIFICATIONS_PURGE}")
    change = entry.changes.get()
    assert (change.kind, change.object_id, change.operation) == ("core.Notification", str(gone.pk), "deleted")
