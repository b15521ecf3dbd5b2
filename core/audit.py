"""The audit trail: who did what, when and from where, recorded in one place for every part of the console.

An audit scope is opened once per write request (AuditMiddleware), per Celery task (signals below) and per
management command (manage.py); model signals add every row saved or deleted inside it, with the before and
after of its changed fields. A write request always leaves one entry (a refused one too); a task or a
command leaves one only when it changed something. Secrets are never written: a field whose name says it
holds one shows only that it changed.
"""

import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.core.serializers.json import DjangoJSONEncoder
from django.db import models, transaction
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from django.utils import timezone
from rest_framework.permissions import SAFE_METHODS

from core.models import ApiToken, AuditChange, AuditEntry
from core.security import client_ip

SYSTEM = "system"
ANONYMOUS = "anonymous"
HIDDEN = "(hidden)"
# Rows of these apps are what the operators care about; Django's own bookkeeping (sessions, beat's
# schedule copy, axes' attempts, content types) is not.
AUDITED_APPS = frozenset({"core", "accounts", "ingestion", "packages", "reminders", "operations", "auth"})
# The trail itself and rows that only say which process holds what.
UNAUDITED_MODELS = frozenset(
    {"core.AuditEntry", "core.AuditChange", "core.SessionHolder", "core.IdempotentRequest", "auth.Permission"}
)
SECRET_FIELD = re.compile(r"password|secret|sealed|token|key|session|hash", re.IGNORECASE)
# Commands that change the schema or serve requests (each request is its own scope).
UNRECORDED_COMMANDS = frozenset({"migrate", "makemigrations", "runserver", "test", "collectstatic"})
VALUE_CHARS = 200


@dataclass
class AuditScope:
    via: str
    action: str
    actor: str = SYSTEM
    user: object = None
    path: str = ""
    address: str | None = None
    status_code: int | None = None
    changes: list[AuditChange] = field(default_factory=list)
    left_out: int = 0

    def add(self, change: AuditChange) -> None:
        if len(self.changes) < settings.AUDIT_MAX_CHANGES:
            self.changes.append(change)
        else:
            self.left_out += 1


_scope: ContextVar[AuditScope | None] = ContextVar("audit_scope", default=None)


def audit_scope_current() -> AuditScope | None:
    return _scope.get()


def audit_entry_write(*, scope: AuditScope) -> AuditEntry:
    entry = AuditEntry.objects.create(
        user=scope.user,
        actor=scope.actor[:200],
        via=scope.via,
        action=scope.action[:300],
        path=scope.path[:500],
        status_code=scope.status_code,
        address=scope.address or None,
        changes_left_out=scope.left_out,
    )
    for change in scope.changes:
        change.entry = entry
    AuditChange.objects.bulk_create(scope.changes)
    return entry


@contextmanager
def audit_scope(*, via: str, action: str, always: bool = False, **details) -> Iterator[AuditScope]:
    """Everything saved inside is told to one entry, written at the end (only if something changed,
    unless `always`)."""
    scope = AuditScope(via=via, action=action, **details)
    token = _scope.set(scope)
    try:
        yield scope
    finally:
        _scope.reset(token)
        if always or scope.changes or scope.left_out:
            audit_entry_write(scope=scope)


# Model signals: what changed.


def _audited(sender) -> bool:
    meta = sender._meta
    return meta.app_label in AUDITED_APPS and meta.label not in UNAUDITED_MODELS and not meta.proxy


def _shown(name: str, value):
    if SECRET_FIELD.search(name):
        return HIDDEN
    if isinstance(value, bytes | memoryview):
        return f"({len(value)} bytes)"
    value = json.loads(json.dumps(value, cls=DjangoJSONEncoder, default=str))
    if isinstance(value, str) and len(value) > VALUE_CHARS:
        return value[:VALUE_CHARS] + "…"
    return value


def _values(instance: models.Model) -> dict:
    return {f.attname: getattr(instance, f.attname) for f in instance._meta.concrete_fields}


def _record(*, instance: models.Model, operation: str, fields: dict, using: str) -> None:
    scope = _scope.get()
    change = AuditChange(
        kind=instance._meta.label,
        object_id=str(instance.pk),
        object_repr=str(instance)[:300],
        operation=operation,
        fields=fields,
    )
    # Only what was committed: a change rolled back with its transaction never happened.
    transaction.on_commit(lambda: scope.add(change), using=using)


def _before_save(sender, instance, raw=False, using=None, **kwargs) -> None:
    scope = _scope.get()
    if scope is None or raw or not _audited(sender) or instance._state.adding or instance.pk is None:
        return
    if len(scope.changes) >= settings.AUDIT_MAX_CHANGES:
        return  # it will only be counted: spare the read
    instance._audit_before = (
        sender._base_manager.using(using)
        .filter(pk=instance.pk)
        .values(*(f.attname for f in sender._meta.concrete_fields))
        .first()
    )


def _after_save(sender, instance, created, raw=False, using=None, update_fields=None, **kwargs) -> None:
    if _scope.get() is None or raw or not _audited(sender):
        return
    after = _values(instance)
    if created:
        fields = {name: [None, _shown(name, value)] for name, value in after.items() if value not in (None, "")}
        _record(instance=instance, operation=AuditChange.Operation.CREATED, fields=fields, using=using)
        return
    before = instance.__dict__.pop("_audit_before", None)
    if before is None:
        fields = {}
    else:
        names = [f.attname for f in sender._meta.concrete_fields if update_fields is None or f.name in update_fields]
        fields = {
            name: [_shown(name, before.get(name)), _shown(name, after[name])]
            for name in names
            if before.get(name) != after[name]
        }
        if not fields:
            return  # saved as it was
    _record(instance=instance, operation=AuditChange.Operation.CHANGED, fields=fields, using=using)


def _after_delete(sender, instance, using=None, **kwargs) -> None:
    if _scope.get() is None or not _audited(sender):
        return
    fields = {name: [_shown(name, value), None] for name, value in _values(instance).items() if value not in (None, "")}
    _record(instance=instance, operation=AuditChange.Operation.DELETED, fields=fields, using=using)


def _relations_changed(sender, instance, action, model, pk_set=None, using=None, **kwargs) -> None:
    """Many-to-many rows (a login's groups: its role) send no save signal: told as a change of the row they
    belong to, `{"groups": [[], ["Operators"]]}` for an add."""
    if _scope.get() is None or action not in ("post_add", "post_remove") or not pk_set or not _audited(type(instance)):
        return
    names = sorted(str(row) for row in model._base_manager.using(using).filter(pk__in=pk_set))
    related = str(model._meta.verbose_name_plural)
    fields = {related: [[], names] if action == "post_add" else [names, []]}
    _record(instance=instance, operation=AuditChange.Operation.CHANGED, fields=fields, using=using)


def audit_signals_connect() -> None:
    m2m_changed.connect(_relations_changed, dispatch_uid="audit_relations_changed")
    pre_save.connect(_before_save, dispatch_uid="audit_before_save")
    post_save.connect(_after_save, dispatch_uid="audit_after_save")
    post_delete.connect(_after_delete, dispatch_uid="audit_after_delete")


# Who: requests, tasks and commands.


def audit_exempt(view):
    """A view answering a POST that only reads (a table Flower asks for by POST) leaves no entry."""
    view.audit_exempt = True
    return view


def _actor(user, auth) -> str:
    if user is None or not user.is_authenticated:
        return ANONYMOUS
    if isinstance(auth, ApiToken):
        return str(auth)  # "vera's token 'backup script'"
    return user.get_username()


def _action(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    if match is None:
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return f"{request.method} {request.path}"
    return f"{request.method} {match.view_name or request.path}"


class AuditMiddleware:
    """Every write request leaves one entry, refused or not: placed before the middleware that may refuse it,
    its actor resolved after the view (a login, or a DRF token, is known only then)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in SAFE_METHODS:
            return self.get_response(request)
        via = AuditEntry.Via.API if request.path.startswith("/api/") else AuditEntry.Via.PAGE
        scope = AuditScope(via=via, action="", path=request.path, address=client_ip(request))
        token = _scope.set(scope)
        try:
            response = self.get_response(request)
        finally:
            _scope.reset(token)
        if getattr(request, "_audit_exempt", False):
            return response
        if scope.user is None:
            user = getattr(request, "user", None)
            scope.user = user if user is not None and user.is_authenticated else None
        scope.actor = _actor(scope.user, getattr(request, "auth", None))
        scope.action = _action(request)
        scope.status_code = response.status_code
        audit_entry_write(scope=scope)
        return response

    def process_view(self, request, view_func, view_args, view_kwargs):
        scope = _scope.get()
        if getattr(view_func, "audit_exempt", False):
            request._audit_exempt = True
        elif scope is not None and getattr(request, "user", None) is not None and request.user.is_authenticated:
            scope.user = request.user  # who sent it, even when the view logs them out


# Open scopes of the tasks this process runs now, by task id (Celery's prerun and postrun come apart).
_task_scopes: dict = {}


def audit_task_started(*, task_id: str, task_name: str) -> None:
    """Celery's task_prerun: a task acts as the system."""
    task_scope = audit_scope(via=AuditEntry.Via.TASK, action=f"task {task_name}")
    task_scope.__enter__()
    _task_scopes[task_id] = task_scope


def audit_task_finished(*, task_id: str) -> None:
    task_scope = _task_scopes.pop(task_id, None)
    if task_scope is not None:
        task_scope.__exit__(None, None, None)


@contextmanager
def audit_command(argv: list[str]) -> Iterator[None]:
    """manage.py: a command acts as the system, and leaves an entry if it changed something."""
    name = argv[1] if len(argv) > 1 else "help"
    if name in UNRECORDED_COMMANDS:
        yield
        return
    with audit_scope(via=AuditEntry.Via.COMMAND, action=f"command {name}"):
        yield


def audit_purge(*, older_than: timedelta) -> int:
    return AuditEntry.objects.filter(at__lt=timezone.now() - older_than).delete()[0]
