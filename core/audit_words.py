"""An audit entry in the operator's words: "vera cancelled Flash sale run #12", "Task “ingest due”: 120 packages
created, 340 topic progresses changed"
(docs/decisions/0136-audit-entries-one-per-action-in-words-folded-routes-instead.md).

The verb comes from the route's name (its last word: "…-cancel" -> "cancelled"), or else from what the request
did to the rows; the object from the first row it changed. A task's or a command's many rows are counted by kind.
"""

from collections import Counter

from django.apps import apps

from core.models import AuditChange

# The last words of a route's name (a page's or an API action's) -> what the person did, longest match first.
VERBS = {
    "retry-failed": "retried the failed sends of",
    "retry-all": "retried every skipped package",
    "runs-requeue": "requeued the stuck runs",
    "read-all": "marked every notification read",
    "mark-all-read": "marked every notification read",
    "send-now": "sent now",
    "test-send": "sent a test of",
    "keep-runs-paused": "kept the runs paused of",
    "rest-keep-paused": "kept the runs paused of",
    "end-rest": "ended the rest of",
    "rest-end": "ended the rest of",
    "ingest-now": "started an ingestion of",
    "make-admin": "made a bot admin of",
    "cancel": "cancelled",
    "pause": "paused",
    "resume": "resumed",
    "move": "moved",
    "retry": "retried",
    "delete": "deleted",
    "remove": "removed",
    "revoke": "revoked",
    "deactivate": "deactivated",
    "reactivate": "reactivated",
    "activate": "activated",
    "role": "changed the role of",
    "password": "set the password of",
    "edit": "edited",
    "bulk-edit": "edited several packages:",
    "send": "sent",
    "merge": "merged",
    "dissolve": "dissolved",
    "collect": "collected",
    "join": "joined",
    "leave": "left",
    "read": "marked read",
    "mark-read": "marked read",
    "block": "blocked",
    "repair-missing": "re-uploaded the missing packages of",
    "login": "logged in",
    "logout": "logged out",
    "invite": "chose a password by an invite link",
    "download-links": "made download links for",
}
DONE = {
    AuditChange.Operation.CREATED: "created",
    AuditChange.Operation.CHANGED: "changed",
    AuditChange.Operation.DELETED: "deleted",
}
# Verbs that say it all: no object follows.
WHOLE = frozenset(
    {
        "logged in",
        "logged out",
        "chose a password by an invite link",
        "marked every notification read",
        "retried every skipped package",
        "requeued the stuck runs",
    }
)


def kind_words(label: str, count: int = 1) -> str:
    """ "reminders.ReminderRun" -> "reminder run" ("reminder runs" for several); a kind gone from the code as is."""
    try:
        meta = apps.get_model(label)._meta
    except (LookupError, ValueError):
        return label
    return str(meta.verbose_name if count == 1 else meta.verbose_name_plural)


def object_words(change: AuditChange) -> str:
    """ "Flash sale run #12", "package #3 models.zip", "reminder runs" (a row the route named but no id)."""
    kind = kind_words(change.kind)
    if not change.object_id:
        return kind_words(change.kind, 2)
    if f"#{change.object_id}" in change.object_repr:
        return change.object_repr
    return f"{kind} {change.object_repr} (#{change.object_id})" if change.object_repr else f"{kind} #{change.object_id}"


def counted(changes: list[AuditChange], left_out: Counter | None = None) -> str:
    """ "120 packages created, 4 topic progresses changed": every row, listed or only counted."""
    counts = Counter((change.kind, change.operation) for change in changes)
    counts.update(left_out or Counter())
    parts = [
        f"{count} {kind_words(kind, count)} {DONE.get(operation, operation)}"
        for (kind, operation), count in sorted(counts.items(), key=lambda item: -item[1])
    ]
    return ", ".join(parts)


def _verb(route: str) -> str:
    name = route.rsplit(":", 1)[-1]
    for ending in sorted(VERBS, key=len, reverse=True):
        if name == ending or name.endswith(f"-{ending}"):
            return VERBS[ending]
    return ""


def _rows(changes: list[AuditChange], left_out: int) -> str:
    first = object_words(changes[0])
    more = len(changes) - 1 + left_out
    return f"{first} and {more} more {'row' if more == 1 else 'rows'}" if more else first


def _route_words(route: str, ids: list[str]) -> str:
    """ "reminders:activity-cancel" and 12 -> "activity cancel #12"."""
    name = route.rsplit(":", 1)[-1].replace("-", " ")
    return f"{name} #{ids[0]}" if len(ids) == 1 else name


def task_words(name: str) -> str:
    """ "ingestion.tasks.ingest_due" -> "ingest due"."""
    return name.rsplit(".", 1)[-1].replace("_", " ")


def request_words(
    *,
    actor: str,
    route: str,
    ids: list[str],
    status: int | None,
    changes: list,
    left_out: int,
    queued: list[str] = (),
) -> str:
    """ "vera cancelled Flash sale run #12"; "victor was refused (403): activity cancel #12"."""
    if status is not None and status >= 400:
        asked = _route_words(route, ids) if route else "a page that does not exist"
        return f"{actor} was refused ({status}): {asked}"
    verb = _verb(route)
    if not verb:
        operations = {change.operation for change in changes}
        verb = DONE[operations.pop()] if len(operations) == 1 else "changed" if changes else "sent"
    if verb in WHOLE:
        return f"{actor} {verb}"
    if changes:
        what = _rows(changes, left_out)
    elif queued:
        what = "(queued: " + ", ".join(task_words(name) for name in queued) + ")"
    else:
        what = _route_words(route, ids)
    return f"{actor} {verb} {what}"


def process_words(*, action: str, changes: list, left_out: Counter) -> str:
    """ "Task “ingest due”: 120 packages created" / "Command “create_login”: 1 user created"."""
    how, _, name = action.partition(" ")
    name = task_words(name)
    return f"{how.capitalize()} “{name}”: {counted(changes, left_out) or 'nothing changed'}"
