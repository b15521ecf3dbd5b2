"""The audit trail: who did what, when and from where, recorded in one place for every part of the console.

An audit scope is opened once per write request (AuditMiddleware), per Celery task (signals below) and per
management command (manage.py); model signals (core.audit_changes) add every row saved or deleted inside it, and
a request's SQL watch notes the rows it changed by UPDATE (which sends no signal). One action is one entry, in
words (core.audit_words): a request that changed something, was refused for who sent it, or logged someone in or
out; a task or a command that changed something. A request that changed nothing (a preview, an estimate, a form
sent back with its errors) leaves none. Nothing a viewer may not read is written: no path, only its route
(core.routes), and secrets, password hints and masked captions as the API shows them to viewers.
"""

import functools
import re
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import timedelta

from django.apps import apps
from django.conf import settings
from django.db import connection, transaction
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from django.utils import timezone
from rest_framework.permissions import SAFE_METHODS

from core.audit_changes import HIDDEN, audit_signals_connect, audit_value_mask, audited, row_named
from core.audit_words import counted, process_words, request_words
from core.db_thread import in_db_thread
from core.models import ApiToken, AuditChange, AuditEntry
from core.routes import NO_ROUTE, path_shown
from core.security import client_ip

__all__ = ["HIDDEN", "audit_signals_connect", "audit_value_mask"]

SYSTEM = "system"
ANONYMOUS = "anonymous"
# Commands that change the schema or serve requests (each request is its own scope; the bot tells each update
# it answers: audit_bot_scope).
UNRECORDED_COMMANDS = frozenset({"migrate", "makemigrations", "runserver", "test", "collectstatic", "run_bot"})
THE_BOT = "the bot"
# Routes whose every write is told, changed or not: who logged in or out, who tried an invite link.
ALWAYS_TOLD = frozenset({"login", "logout", "invite"})
# Answers about what was sent (a form with errors, a row that is not there, a body too large): untold when
# nothing changed. Every other refusal (who sent it: 401, 403; the state it met: 409, 410; too many: 429) and
# every failure is told.
INPUT_REFUSED = frozenset({400, 404, 405, 406, 413, 415, 422})
# A token's "last used" moment is bookkeeping of a read, not an action.
WRITES_NOT_TOLD = frozenset({"core.ApiToken"})
_WRITE_SQL = re.compile(r'^\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+"([^"]+)"', re.IGNORECASE)
_ROW_ID = re.compile(r"[0-9]{1,20}")


@dataclass
class AuditScope:
    via: str
    action: str
    actor: str = SYSTEM
    user: object = None
    path: str = ""
    address: str | None = None
    status_code: int | None = None
    summary: str = ""
    method: str = ""
    route: str = ""  # the route's name: "reminders:activity-cancel"
    route_kwargs: dict = field(default_factory=dict)
    changes: list[AuditChange] = field(default_factory=list)
    left_out: int = 0
    left_out_counts: Counter = field(default_factory=Counter)
    written: set[str] = field(default_factory=set)  # labels of the audited rows changed by SQL, signal or not
    queued: list[str] = field(default_factory=list)  # the Celery tasks it sent
    _index: dict = field(default_factory=dict, repr=False)

    def add(self, change: AuditChange) -> None:
        """One change a row: a row saved twice in one action is told once, from its first before to its last
        after (a login made, then given its role: "created, role: operator")."""
        key = (change.kind, change.object_id)
        kept = self._index.get(key)
        if kept is not None:
            _merged(kept, change)
        elif len(self.changes) < settings.AUDIT_MAX_CHANGES:
            self.changes.append(change)
            self._index[key] = change
        else:
            self.left_out += 1
            self.left_out_counts[(change.kind, change.operation)] += 1


def _merged(kept: AuditChange, change: AuditChange) -> None:
    kept.object_repr = change.object_repr
    if change.operation == AuditChange.Operation.DELETED:
        kept.operation, kept.fields = change.operation, change.fields
        return
    for name, (before, after) in change.fields.items():
        if name in change.relations and name in kept.fields:  # rows added or removed, one save after another
            kept.fields[name] = [sorted({*kept.fields[name][0], *before}), sorted({*kept.fields[name][1], *after})]
            continue
        first = kept.fields[name][0] if name in kept.fields else before
        if first == after != HIDDEN and kept.operation != AuditChange.Operation.CREATED:
            kept.fields.pop(name, None)  # changed and changed back
        else:
            kept.fields[name] = [first, after]


_scope: ContextVar[AuditScope | None] = ContextVar("audit_scope", default=None)


def audit_scope_current() -> AuditScope | None:
    return _scope.get()


def _summary(scope: AuditScope) -> str:
    if scope.summary:
        return scope.summary
    if scope.via in (AuditEntry.Via.TASK, AuditEntry.Via.COMMAND):
        return process_words(action=scope.action, changes=scope.changes, left_out=scope.left_out_counts)
    if scope.via == AuditEntry.Via.BOT:
        return f"The bot {scope.action}: {counted(scope.changes, scope.left_out_counts)}"
    return request_words(
        actor=scope.actor,
        route=scope.route,
        ids=[str(value) for value in scope.route_kwargs.values() if _ROW_ID.fullmatch(str(value))],
        status=scope.status_code,
        changes=scope.changes,
        left_out=scope.left_out,
        queued=scope.queued,
    )


def audit_task_sent(*, task_name: str) -> None:
    """Celery's before_task_publish: work a request queued is an action even before it changes a row."""
    scope = _scope.get()
    if scope is not None and scope.method and task_name not in scope.queued:
        scope.queued.append(task_name)


def audit_entry_write(*, scope: AuditScope) -> AuditEntry:
    entry = AuditEntry.objects.create(
        user=scope.user,
        actor=scope.actor[:200],
        via=scope.via,
        action=scope.action[:300],
        summary=_summary(scope)[:500],
        path=path_shown(scope.path)[:500] if scope.path else "",
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


@asynccontextmanager
async def audit_bot_scope(*, action: str) -> AsyncIterator[AuditScope]:
    """One update the bot answers ("answered Dana (@dana, 7001)"): one entry, written as it goes, if it changed
    something. The bot's process is one long command; its entries are its updates."""
    scope = AuditScope(via=AuditEntry.Via.BOT, action=action[:300], actor=THE_BOT)
    token = _scope.set(scope)
    try:
        yield scope
    finally:
        _scope.reset(token)
        if scope.changes or scope.left_out:
            await in_db_thread(audit_entry_write)(scope=scope)


# A request's SQL watch: rows changed by an UPDATE send no signal, but are an action all the same.


@functools.cache
def _labels_by_table() -> dict[str, str]:
    return {
        model._meta.db_table: model._meta.label
        for model in apps.get_models()
        if audited(model) and model._meta.label not in WRITES_NOT_TOLD
    }


def _writes_watched(scope: AuditScope):
    def watch(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        found = _WRITE_SQL.match(sql)
        label = _labels_by_table().get(found.group(1)) if found else None
        if label and context["cursor"].rowcount:
            transaction.on_commit(lambda: scope.written.add(label), using=context["connection"].alias)
        return result

    return watch


def _written_without_signal(scope: AuditScope) -> None:
    """A row changed by UPDATE alone is told as a change without fields: the route's own row when it names one
    (a run's Cancel: /reminders/activity/12/cancel/), else the kind of rows."""
    told = {change.kind for change in scope.changes}
    silent = sorted(scope.written - told)
    ids = [value for value in scope.route_kwargs.values() if _ROW_ID.fullmatch(str(value))]
    for label in silent:
        model = apps.get_model(label)
        row = model._base_manager.filter(pk=ids[0]).first() if len(silent) == 1 and len(ids) == 1 else None
        scope.add(
            AuditChange(
                kind=label,
                object_id=str(row.pk) if row else "",
                object_repr=row_named(row) if row else "",
                operation=AuditChange.Operation.CHANGED,
                fields={},
            )
        )


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


def _route(request: HttpRequest):
    match = getattr(request, "resolver_match", None)
    if match is None:
        try:
            match = resolve(request.path_info)
        except Resolver404:
            return None
    return match


def _told(scope: AuditScope) -> bool:
    """Whether a write request was an action: it changed rows or queued work, or was refused for who sent it or
    the state it met, or failed, or logged someone in or out. A preview, an estimate, a form sent back with its
    errors changed nothing and queued nothing."""
    refused = (scope.status_code or 0) >= 400 and scope.status_code not in INPUT_REFUSED
    # A summary a service set says an action that changed no row happened (a signed link made: a new way in).
    said = bool(scope.summary) and (scope.status_code or 0) < 400
    return bool(
        scope.changes
        or scope.left_out
        or scope.written
        or scope.queued
        or refused
        or said
        or scope.route in ALWAYS_TOLD
    )


class AuditMiddleware:
    """Every write request that is an action leaves one entry, refused or not: placed before the middleware that
    may refuse it, its actor resolved after the view (a login, or a DRF token, is known only then)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in SAFE_METHODS:
            return self.get_response(request)
        via = AuditEntry.Via.API if request.path.startswith("/api/") else AuditEntry.Via.PAGE
        scope = AuditScope(via=via, action="", method=request.method, path=request.path, address=client_ip(request))
        token = _scope.set(scope)
        try:
            with connection.execute_wrapper(_writes_watched(scope)):
                response = self.get_response(request)
        finally:
            _scope.reset(token)
        if getattr(request, "_audit_exempt", False):
            return response
        match = _route(request)
        scope.route = (match.view_name or "") if match else ""
        scope.route_kwargs = match.kwargs if match else {}
        scope.action = f"{request.method} {scope.route or NO_ROUTE}"
        scope.status_code = response.status_code
        _written_without_signal(scope)
        if not _told(scope):
            return response
        if scope.user is None:
            user = getattr(request, "user", None)
            scope.user = user if user is not None and user.is_authenticated else None
        scope.actor = _actor(scope.user, getattr(request, "auth", None))
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
