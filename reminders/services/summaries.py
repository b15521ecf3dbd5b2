"""What a stopped run says to the operator: its summaries, and the notification it raises."""

import logging
from collections import Counter
from datetime import datetime

from django.conf import settings
from django.urls import reverse

from accounts.models import TelegramAccount
from core.formatting import format_moment
from core.models import RunStatus
from core.notifications import notification_raise, notifications_resolve, run_subject
from reminders.models import (
    NEEDS_OPERATOR,
    Reminder,
    ReminderRun,
)
from reminders.schedule import DeliveryWindow, local_dated, zone

logger = logging.getLogger(__name__)


# Summaries and notifications ------------------------------------------------------------------------------------


def summary_waiting(*, reminder: Reminder, fired_at: datetime, now: datetime) -> str:
    """What a run fired outside its window says while it waits (written again when the reminder is edited)."""
    window = DeliveryWindow.of(reminder)
    fired = f"Fired at {window.local_dated(fired_at)} ({reminder.timezone}), outside the delivery window {window.text}"
    if window.containing(now) is not None:
        return f"{fired}: the window is open now; it starts within a minute."
    return f"{fired}: it starts by itself when the window opens, at {window.local_dated(window.next_start(now))}."


def summary_canceled(*, counts: dict[str, int], partly: int) -> str:
    """What a canceled run says, from the same counts as its counters: a group cut part-way is a skipped one."""
    total = sum(counts.values())
    text = f"Canceled by operator: {counts['sent']} of {total} groups delivered, {counts['skipped']} skipped"
    if partly:
        text += f" ({partly} of them part-way)"
    return text + (f", {counts['failed']} failed." if counts["failed"] else ".")


def _still_pending(counts: dict[str, int], partly: int) -> str:
    text = f"{counts['pending']} still pending"
    return text + f" ({partly} with some parts sent; resume sends only the rest)" if partly else text


def summary_window_closed(*, run: ReminderRun, counts: dict[str, int], partly: int, before: str = "") -> str:
    """`before`: why the run stopped ahead of the window's end (no part may go out after it)."""
    reminder = run.reminder
    window = DeliveryWindow.of(reminder)
    end = f"{window.local_dated(run.window_end_at)} ({reminder.timezone})"
    closed = f"Delivery window closed at {end}."
    if before:
        closed = f"Paused before the delivery window's end at {end}: {before}."
    if not counts["sent"] and not partly:
        text = f"{closed} No group was delivered; {counts['pending']} of {run.total} still pending."
    else:
        text = f"{closed} {counts['sent']} of {run.total} groups delivered, {_still_pending(counts, partly)}."
        if not reminder.auto_resume:
            text += " Resume sends the rest."
    if counts["failed"]:
        text += f" {counts['failed']} failed."
    if reminder.auto_resume:
        opens = window.local_dated(window.next_start(run.window_end_at))
        text += f" It resumes by itself when the window opens again, at {opens}."
    return text


def summary_finished(*, run: ReminderRun, counts: dict[str, int]) -> str:
    if not counts["failed"]:
        return ""
    return (
        f"{counts['sent']} of {run.total} groups delivered, {counts['failed']} failed. "
        "Retry failed sends to them again."
    )


def summary_stopped(*, run: ReminderRun, counts: dict[str, int], reason: str, partly: int) -> str:
    return (
        f"Stopped: {reason} {counts['sent']} of {run.total} groups delivered, {_still_pending(counts, partly)}. "
        "Resume once it is fixed."
    )


def summary_outage(*, run: ReminderRun, counts: dict[str, int], reason: str, partly: int) -> str:
    return (
        f"Paused: {reason} {counts['sent']} of {run.total} groups delivered, {_still_pending(counts, partly)}. "
        "It resumes by itself once Redis answers again; Resume or Cancel it meanwhile if you like."
    )


def summary_account_resting(
    *, run: ReminderRun | None, account: TelegramAccount, counts: dict[str, int], partly: int, total: int = 0
) -> str:
    """Why a run of a resting (or stopped) account is paused; `total` for a run not yet made."""
    delivered = f"{counts['sent']} of {run.total if run else total} groups delivered, {_still_pending(counts, partly)}."
    if account.sending_stopped:
        return (
            f"Paused: sending is stopped for {account} by the operator. {delivered} "
            "Allow sending on the Accounts page, then Resume."
        )
    until = format_moment(account.resting_until, dated=True) if account.resting_until else ""
    after = (
        "It resumes by itself when the rest ends."
        if account.rest_resumes_runs
        else "Resume from the Activity tab after the rest."
    )
    return f"Paused: {account} is resting until {until} ({account.rest_reason}). {delivered} {after}"


def summary_too_many_failed(*, run: ReminderRun, counts: dict[str, int], reasons: Counter, partly: int) -> str:
    failed = sum(reasons.values())
    listed = "; ".join(f"{count}× {reason}" for reason, count in reasons.most_common(5))
    return (
        f"Paused: {failed} of the last {settings.REMINDER_ERROR_RECENT_GROUPS} groups failed "
        f"(more than {settings.REMINDER_ERROR_SHARE_PERCENT} %): {listed}. "
        f"{counts['sent']} of {run.total} groups delivered, {_still_pending(counts, partly)}. "
        "Fix the cause, then Resume, or move the pending groups to another account."
    )


def summary_paused_by_operator(*, run: ReminderRun, at: datetime) -> str:
    return (
        f"Paused by the operator at {local_dated(at, zone(run.zone_name))} ({run.zone_name}); every part sent so "
        "far is kept. Resume goes on from there."
    )


def summary_moved(*, run: ReminderRun, moved: int, to_run: ReminderRun) -> str:
    return (
        f"{moved} pending groups moved to run #{to_run.pk}, sent by {to_run.account}. "
        f"{run.sent} of {run.total} groups delivered here" + (f", {run.failed} failed." if run.failed else ".")
    )


def reminder_run_notification_title(*, run: ReminderRun) -> str:
    if run.status == RunStatus.PAUSED:
        return f"Reminder paused — {run.sent} of {run.total} groups delivered. Tap to resume or cancel."
    if run.status == RunStatus.PARTIAL:
        return f"Reminder partly delivered — {run.sent} of {run.total} groups."
    return f"Reminder failed — {run.sent} of {run.total} groups delivered."


def reminder_run_subject(run: ReminderRun) -> str:
    return f"reminder-run:{run.pk}"


# A missed schedule slot (services.slots): one notification per reminder, however many slots it missed.
SLOT_MISSED = "reminder_slot_missed"


def reminder_slots_subject(reminder_id: int) -> str:
    return f"reminder:{reminder_id}"


def reminder_run_notifications_resolve(*, run: ReminderRun, missed: bool = False) -> int:
    """Resumed, retried or canceled: the run's paused/partial/failed notifications resolve themselves, and the
    reminder's missed-slot one when the run stood for a missed slot."""
    resolved = notifications_resolve(subject=reminder_run_subject(run))
    resolved += notifications_resolve(subject=run_subject(run))
    if missed and run.reminder_id is not None:
        resolved += notifications_resolve(subject=reminder_slots_subject(run.reminder_id))
    return resolved


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
        subject=reminder_run_subject(run),
        url=reverse("reminders:detail", args=[run.reminder_id])
        if run.reminder_id
        else reverse("reminders:activity-run", args=[run.pk]),
        context={"reminder": run.reminder_id, "run": run.pk, "sent": run.sent, "total": run.total},
    )
