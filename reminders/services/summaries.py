"""What a stopped run says to the operator: its summaries, and the notification it raises."""

import logging
from datetime import datetime

from django.urls import reverse

from core.models import RunStatus
from core.notifications import notification_raise
from reminders.models import (
    NEEDS_OPERATOR,
    Reminder,
    ReminderRun,
)
from reminders.schedule import (
    DeliveryWindow,
)

logger = logging.getLogger(__name__)


# Summaries and notifications ------------------------------------------------------------------------------------


def summary_waiting(*, reminder: Reminder, fired_at: datetime, now: datetime) -> str:
    """What a run fired outside its window says while it waits (written again when the reminder is edited)."""
    window = DeliveryWindow.of(reminder)
    fired = f"Fired at {window.local_hm(fired_at)} ({reminder.timezone}), outside the delivery window {window.text}"
    if window.containing(now) is not None:
        return f"{fired}: the window is open now; it starts within a minute."
    return f"{fired}: it starts by itself when the window opens, at {window.local_when(window.next_start(now), now)}."


def _still_pending(counts: dict[str, int], partly: int) -> str:
    text = f"{counts['pending']} still pending"
    return text + f" ({partly} with some parts sent; resume sends only the rest)" if partly else text


def summary_window_closed(*, run: ReminderRun, counts: dict[str, int], partly: int) -> str:
    reminder = run.reminder
    window = DeliveryWindow.of(reminder)
    closed = f"Delivery window closed at {window.local_hm(run.window_end_at)} ({reminder.timezone})."
    if not counts["sent"] and not partly:
        text = f"{closed} No group was delivered; {counts['pending']} of {run.total} still pending."
    else:
        text = f"{closed} {counts['sent']} of {run.total} groups delivered, {_still_pending(counts, partly)}."
        if not reminder.auto_resume:
            text += " Resume from the Activity tab."
    if counts["failed"]:
        text += f" {counts['failed']} failed."
    if reminder.auto_resume:
        opens = window.local_hm(window.next_start(run.window_end_at))
        text += f" It resumes by itself when the window opens again, at {opens}."
    return text


def summary_finished(*, run: ReminderRun, counts: dict[str, int]) -> str:
    if not counts["failed"]:
        return ""
    return (
        f"{counts['sent']} of {run.total} groups delivered, {counts['failed']} failed. "
        "Retry failed from the Activity tab."
    )


def summary_stopped(*, run: ReminderRun, counts: dict[str, int], reason: str, partly: int) -> str:
    return (
        f"Stopped: {reason} {counts['sent']} of {run.total} groups delivered, {_still_pending(counts, partly)}. "
        "Resume from the Activity tab once it is fixed."
    )


def reminder_run_notification_title(*, run: ReminderRun) -> str:
    if run.status == RunStatus.PAUSED:
        return f"Reminder paused — {run.sent} of {run.total} groups delivered. Tap to resume or cancel."
    if run.status == RunStatus.PARTIAL:
        return f"Reminder partly delivered — {run.sent} of {run.total} groups."
    return f"Reminder failed — {run.sent} of {run.total} groups delivered."


def reminder_run_notify(*, run: ReminderRun) -> None:
    """A run that needs the operator (paused, partial, failed) raises a notification: the bell, and a
    browser notification that opens the reminder's page."""
    if run.status not in NEEDS_OPERATOR:
        return
    title = reminder_run_notification_title(run=run)
    logger.warning("%s [reminder %s, run %s] %s", title, run.reminder_id, run.pk, run.error_summary)
    notification_raise(
        type=f"reminder_run_{run.status}",
        severity="warning" if run.status == RunStatus.PAUSED else "error",
        title=title,
        message=run.error_summary or title,
        subject=f"reminder-run:{run.pk}",
        url=reverse("reminders:detail", args=[run.reminder_id])
        if run.reminder_id
        else reverse("reminders:activity-run", args=[run.pk]),
        context={"reminder": run.reminder_id, "run": run.pk, "sent": run.sent, "total": run.total},
    )
