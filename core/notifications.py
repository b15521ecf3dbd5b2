"""Notifications: what the operators should know, raised by services and shown behind the bell.

Any app raises one with `notification_raise(...)`. Repeats merge: while a notification of the same
(type, subject) is unread and less than DEDUPE_WINDOW old, raising it again updates that row (title,
message, context, url, severity: the latest wins) and bumps its count, so a channel that fails every
cycle gives one notification a day, not one every ten minutes. Once read, the next repeat is new.

A notification resolves itself when its cause is gone: the service that removes the cause calls
`notifications_resolve(subject=...)` (a resumed run, a channel read again, an account logged in again),
which marks the unread ones about that subject read and resolved, so the bell count drops.
"""

import logging
from datetime import timedelta

from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from core import locks
from core.models import ClaimableRun, Notification, NotificationSeverity

logger = logging.getLogger(__name__)

DEDUPE_WINDOW = timedelta(hours=24)

# Types raised from core; other apps name theirs next to the code that raises them.
RUN_REQUEUED = "run_requeued"
RUN_FAILED = "run_failed"


def notification_raise(
    *,
    type: str,
    severity: str,
    title: str,
    message: str,
    subject: str,
    url: str = "",
    context: dict | None = None,
) -> Notification:
    """Raise a notification, or bump the unread one of the same (type, subject) from the last 24 hours.

    type: what happened, a short snake_case name ("channel_unreachable", "reminder_run_ended").
    severity: "info", "warning" or "error" (NotificationSeverity).
    subject: what it happened to, stable across repeats ("channel:12", "reminder-run:40").
    url: where the operator acts on it (a path on this site), optional.
    context: JSON-serialisable details for the API and the page, optional.
    """
    if severity not in NotificationSeverity.values:
        raise ValueError(f"severity must be one of {', '.join(NotificationSeverity.values)}, not {severity!r}")
    if not type or not subject:
        raise ValueError("A notification needs a type and a subject (what it is about).")
    fields = {
        "severity": severity,
        "title": title[:200],
        "message": message,
        "context": context or {},
        "url": url[:500],
    }
    with transaction.atomic():
        # Two workers raising the same thing at once must still leave one row.
        locks.advisory_xact_lock(namespace=locks.NOTIFICATION, name=f"{type}\x00{subject}")
        now = timezone.now()
        notification = (
            Notification.objects.filter(
                type=type, subject=subject[:255], read_at__isnull=True, created_at__gte=now - DEDUPE_WINDOW
            )
            .order_by("-created_at")
            .first()
        )
        if notification is None:
            notification = Notification.objects.create(
                type=type, subject=subject[:255], created_at=now, last_raised_at=now, **fields
            )
        else:
            for name, value in fields.items():
                setattr(notification, name, value)
            notification.count += 1
            notification.last_raised_at = now
            notification.save(update_fields=[*fields, "count", "last_raised_at"])
    # The code that raises it logs the trouble itself; this line ties the two together.
    logger.info("Notification %s (%s, x%d): %s", type, subject, notification.count, title)
    return notification


def notification_mark_read(*, notification: Notification) -> Notification:
    if notification.read_at is None:
        now = timezone.now()
        Notification.objects.filter(pk=notification.pk, read_at__isnull=True).update(read_at=now)
        notification.read_at = now
    return notification


def notifications_mark_all_read() -> int:
    return Notification.objects.filter(read_at__isnull=True).update(read_at=timezone.now())


def notifications_resolve(*, subject: str, types: list[str] | tuple[str, ...] = ()) -> int:
    """The cause of the unread notifications about `subject` (of `types`, or of any type) is gone."""
    unread = Notification.objects.filter(subject=subject[:255], read_at__isnull=True)
    if types:
        unread = unread.filter(type__in=types)
    now = timezone.now()
    resolved = unread.update(read_at=now, resolved_at=now)
    if resolved:
        logger.info("Resolved %d notification(s) about %s", resolved, subject)
    return resolved


def notifications_purge(*, older_than: timedelta) -> int:
    """Delete read notifications last raised before `older_than` ago; unread ones stay until read."""
    cutoff = timezone.now() - older_than
    deleted, _ = Notification.objects.filter(read_at__isnull=False, last_raised_at__lt=cutoff).delete()
    return deleted


def run_subject(run: ClaimableRun) -> str:
    return f"{run._meta.label_lower}:{run.pk}"


def notify_run_reaped(*, run: ClaimableRun, requeued: bool) -> Notification:
    """The reaper took a run from a worker that stopped answering (core.runs.runs_reap)."""
    name = f"{run._meta.verbose_name} #{run.pk}"
    url = run.get_absolute_url() if hasattr(run, "get_absolute_url") else reverse("operations")
    context = {"run": run._meta.label, "run_id": run.pk, "requeue_count": run.requeue_count}
    if requeued:
        return notification_raise(
            type=RUN_REQUEUED,
            severity=NotificationSeverity.WARNING,
            title=f"{name.capitalize()} re-queued after its worker went quiet",
            message=f"{run.error} It will run again on another worker (re-queue {run.requeue_count}).",
            subject=run_subject(run),
            url=url,
            context=context,
        )
    return notification_raise(
        type=RUN_FAILED,
        severity=NotificationSeverity.ERROR,
        title=f"{name.capitalize()} failed: its worker stopped answering",
        message=run.error,
        subject=run_subject(run),
        url=url,
        context=context,
    )
