"""The audit trail (core/audit.py): one entry per write, naming its actor, with what changed and no secrets."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.utils import timezone
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from core.audit import HIDDEN, INPUT_REFUSED, audit_purge, audit_task_finished, audit_task_started
from core.models import AuditChange, AuditEntry, Notification

pytestmark = pytest.mark.django_db(transaction=True)

WRITE_METHODS = ("post", "put", "patch", "delete")
CONVERTER = re.compile(r"<(?:(\w+):)?\w+>")
NAMED_GROUP = re.compile(r"\(\?P<\w+>[^)]*\)")


def _filled(route: str) -> str:
    return CONVERTER.sub(lambda m: "1" if m.group(1) == "int" else "x", route)


def _page_routes(resolver=None, prefix: str = "") -> list[tuple[str, object]]:
    """Every route of the URL conf outside the API (walked by its own schema), as a path and its view."""
    routes = []
    for entry in (resolver or get_resolver()).url_patterns:
        pattern = str(entry.pattern)
        part = NAMED_GROUP.sub("x", pattern).lstrip("^").rstrip("$") if "(?P<" in pattern else _filled(pattern)
        path = prefix + part
        if path.startswith("api/"):
            continue
        if isinstance(entry, URLResolver):
            routes += _page_routes(entry, path)
        elif isinstance(entry, URLPattern):
            routes.append(("/" + path, entry.callback))
    return routes


def _api_writes() -> list[tuple[str, str]]:
    schema = SchemaGenerator().get_schema(request=None, public=True)
    return [
        (method, re.sub(r"\{\w+\}", "1", path))
        for path, operations in schema["paths"].items()
        for method in operations
        if method in WRITE_METHODS
    ]


def _sweep_entry_ok(entries, response, *, actor: str, via: str) -> bool:
    """At most one entry; none for a request refused for what it sent (nothing changed); else one, naming
    its actor, its answer and its route (never a path that is not a route)."""
    if response.status_code in INPUT_REFUSED and not any(entry.changes.exists() for entry in entries):
        return not entries
    return (
        len(entries) <= 1
        and all(
            (e.actor, e.via, e.status_code) == (actor, via, response.status_code) and e.summary.startswith(actor)
            for e in entries
        )
        and (len(entries) == 1 or response.status_code < 400)
    )


def test_every_write_of_the_api_leaves_at_most_one_entry_naming_its_actor(api, admin_user):
    writes = _api_writes()
    assert len(writes) > 20, writes
    missed = []
    for method, path in writes:
        before = AuditEntry.objects.count()
        response = getattr(api, method)(path, {}, format="json")
        entries = list(AuditEntry.objects.order_by("-pk")[: AuditEntry.objects.count() - before])
        if not _sweep_entry_ok(entries, response, actor=admin_user.username, via=AuditEntry.Via.API):
            missed.append((method, path, response.status_code, [(e.actor, e.summary) for e in entries]))
    assert not missed, f"{len(missed)} of {len(writes)} API writes not audited as they should be: {missed}"


def test_every_write_of_the_api_a_viewer_is_refused_leaves_one_entry_naming_them(django_user_model):
    viewer = django_user_model.objects.create_user(username="vic", password="pw-long-enough")
    client = APIClient()
    client.force_login(viewer)
    missed = []
    refused = 0
    for method, path in _api_writes():
        before = AuditEntry.objects.count()
        response = getattr(client, method)(path, {}, format="json")
        entries = list(AuditEntry.objects.order_by("-pk")[: AuditEntry.objects.count() - before])
        if response.status_code == 403:
            refused += 1
            if [(e.actor, e.status_code) for e in entries] != [("vic", 403)]:
                missed.append((method, path, [(e.actor, e.summary) for e in entries]))
    assert refused > 20
    assert not missed, f"{len(missed)} refusals not audited once: {missed}"


@pytest.mark.large  # bench-sized: a sweep of the whole surface; `make test` runs it, `make test-fast` leaves it out
def test_every_post_of_the_pages_leaves_at_most_one_entry_naming_its_actor(admin_user):
    # A view that fails is answered 500 by Django, and still leaves its entry.
    client = Client(raise_request_exception=False)
    routes = [(path, view) for path, view in _page_routes() if not getattr(view, "audit_exempt", False)]
    assert len(routes) > 30, routes
    missed = []
    for path, _view in routes:
        client.force_login(admin_user)  # logout is one of the routes
        before = AuditEntry.objects.count()
        response = client.post(path, {})
        entries = list(AuditEntry.objects.order_by("-pk")[: AuditEntry.objects.count() - before])
        ok = _sweep_entry_ok(entries, response, actor=admin_user.username, via=AuditEntry.Via.PAGE) and all(
            e.address == "127.0.0.1" for e in entries
        )
        if not ok:
            missed.append((path, response.status_code, [(e.actor, e.summary) for e in entries]))
    assert not missed, f"{len(missed)} of {len(routes)} page POSTs not audited as they should be: {missed}"


def test_a_post_that_only_reads_leaves_no_entry(operator):
    operator.post("/flower/tasks/datatable", {})
    assert not AuditEntry.objects.exists()


def test_an_entry_holds_the_before_and_after_of_changed_fields(operator):
    notification = Notification.objects.create(type="t", severity="info", title="Disk full", subject="disk")
    audit_task_started(task_id="t0", task_name="core.tasks.example")
    notification.title = "Disk almost full"
    notification.save()
    notification.save()  # saved as it was: nothing more to say
    audit_task_finished(task_id="t0")
    change = AuditEntry.objects.get().changes.get()
    assert (change.kind, change.object_id, change.operation) == ("core.Notification", str(notification.pk), "changed")
    assert change.object_repr == "Disk almost full"
    assert change.fields == {"title": ["Disk full", "Disk almost full"]}, "only the fields that changed"


def test_a_viewer_refused_is_recorded_as_that_viewer(client, django_user_model):
    viewer = django_user_model.objects.create_user(username="vera", password="pw-long-enough")
    client.force_login(viewer)
    response = client.post("/notifications/read-all/")
    assert response.status_code == 403
    entry = AuditEntry.objects.get()
    assert (entry.actor, entry.status_code, entry.changes.count()) == ("vera", 403, 0)


def test_a_login_is_recorded_as_the_person_and_their_password_never(client, django_user_model):
    django_user_model.objects.create_user(username="vera", password="pw-long-enough")
    client.post("/login/", {"username": "vera", "password": "pw-long-enough"})
    entry = AuditEntry.objects.get()
    assert entry.actor == "vera"
    assert "pw-long-enough" not in str(list(AuditChange.objects.values_list("fields", flat=True)))


def test_secrets_are_never_written(operator, admin_user):
    user = get_user_model().objects.get(username="operator")
    audit_task_started(task_id="t1", task_name="core.tasks.example")
    user.set_password("another-long-pass")
    user.save()
    audit_task_finished(task_id="t1")
    entry = AuditEntry.objects.get()
    assert (entry.actor, entry.via, entry.action) == ("system", "task", "task core.tasks.example")
    assert entry.summary == "Task “example”: 1 user changed"
    assert entry.changes.get().fields["password"] == [HIDDEN, HIDDEN]


def test_a_task_that_changes_nothing_leaves_no_entry(db):
    audit_task_started(task_id="t2", task_name="core.tasks.example")
    Notification.objects.count()
    audit_task_finished(task_id="t2")
    assert not AuditEntry.objects.exists()


def test_a_task_touching_many_rows_lists_some_and_counts_the_rest(settings):
    settings.AUDIT_MAX_CHANGES = 3
    audit_task_started(task_id="t3", task_name="core.tasks.example")
    for number in range(5):
        Notification.objects.create(type="t", severity="info", title=f"n{number}", subject=f"s{number}")
    audit_task_finished(task_id="t3")
    entry = AuditEntry.objects.get()
    assert (entry.changes.count(), entry.changes_left_out) == (3, 2)


def test_a_change_rolled_back_is_not_recorded():
    from django.db import transaction

    audit_task_started(task_id="t4", task_name="core.tasks.example")
    with pytest.raises(RuntimeError), transaction.atomic():
        Notification.objects.create(type="t", severity="info", title="gone", subject="s")
        raise RuntimeError
    audit_task_finished(task_id="t4")
    assert not AuditEntry.objects.exists()


def test_old_entries_are_purged():
    old = AuditEntry.objects.create(actor="system", via="task", action="x")
    AuditEntry.objects.filter(pk=old.pk).update(at=timezone.now() - timedelta(days=400))
    AuditEntry.objects.create(actor="system", via="task", action="y")
    assert audit_purge(older_than=timedelta(days=365)) == 1
    assert list(AuditEntry.objects.values_list("action", flat=True)) == ["y"]
