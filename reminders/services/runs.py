"""Reminder runs: firing one, its counters, and the operator's actions on it (resume, retry, cancel,
auto-resume)."""

import logging
import secrets
from datetime import datetime

from django.db import transaction
from django.db.models import Count

from accounts.models import AuthState, TelegramAccount
from core import clock
from core.errors import OperatorError
from core.models import RunStatus
from core.runs import run_task_send
from reminders.models import (
    CANCELABLE,
    RESUMABLE,
    RETRYABLE,
    WAITING,
    Reminder,
    ReminderRun,
    ReminderRunTarget,
    RunTrigger,
    TargetStatus,
)
from reminders.schedule import (
    DeliveryWindow,
)
from reminders.services.summaries import reminder_run_notify, summary_waiting

logger = logging.getLogger(__name__)

CANCELED = "canceled by operator"
REMINDER_DELETED = "the reminder was deleted"


class ReminderStateError(OperatorError):
    """The action does not fit the reminder's or run's state; the message says what to do."""


# Runs -----------------------------------------------------------------------------------------------------------


def _random_id() -> int:
    return secrets.randbits(63) or 1


def _account_problem(account: TelegramAccount) -> str:
    if not account.is_active:
        return f"{account} is switched off; switch it on, then Resume from the Activity tab."
    if account.auth_state != AuthState.AUTHENTICATED:
        return f"{account} cannot send ({account.get_auth_state_display()}); log it in again, then Resume."
    return ""


def reminder_fire(*, reminder: Reminder, trigger: str = RunTrigger.MANUAL, enqueue: bool = True) -> ReminderRun:
    """A run with every target `pending`, in a constant number of queries: queued inside the delivery window,
    waiting for it outside (it starts by itself when the window opens), failed when the account cannot send."""
    now = clock.now()
    reminder = Reminder.objects.select_related("account").get(pk=reminder.pk)
    parts = list(reminder.parts.order_by("order").values("text", "media_id", "caption"))
    targets = list(reminder.targets.order_by("pk").values_list("chat_id", "topic_id"))
    if not parts or not targets:
        raise ReminderStateError(f"“{reminder}” has no {'parts' if not parts else 'groups'} to send.")
    window = DeliveryWindow.of(reminder).containing(now)
    summary = _account_problem(reminder.account)
    if summary:
        status = RunStatus.FAILED
    elif window is None:
        status, summary = WAITING, summary_waiting(reminder=reminder, fired_at=now, now=now)
    else:
        status = RunStatus.QUEUED
    with transaction.atomic():
        run = ReminderRun.objects.create(
            reminder=reminder,
            reminder_name=reminder.name,
            account=reminder.account,
            trigger=trigger,
            parts=[{"text": p["text"], "media": p["media_id"], "caption": p["caption"]} for p in parts],
            total=len(targets),
            pending=len(targets),
            fired_at=now,
            window_end_at=window.end_at if window else None,
            status=status,
            finished_at=now if status == RunStatus.FAILED else None,
            error_summary=summary,
        )
        ReminderRunTarget.objects.bulk_create(
            ReminderRunTarget(run=run, chat_id=chat_id, topic_id=topic_id, random_ids=[_random_id() for _ in parts])
            for chat_id, topic_id in targets
        )
        if enqueue and status == RunStatus.QUEUED:
            transaction.on_commit(lambda: reminder_run_enqueue(run.pk))
    if status == RunStatus.FAILED:
        reminder_run_notify(run=run)
    return run


def reminder_run_enqueue(run_id: int) -> None:
    run_task_send("reminders.tasks.reminder_run_execute", run_id)


def target_counts(*, run_id: int) -> dict[str, int]:
    """Counters from the targets themselves; a target `sending` is still pending."""
    by_status = dict(ReminderRunTarget.objects.filter(run_id=run_id).values_list("status").annotate(count=Count("pk")))
    return {
        "sent": by_status.get(TargetStatus.SENT, 0),
        "failed": by_status.get(TargetStatus.FAILED, 0),
        "skipped": by_status.get(TargetStatus.SKIPPED, 0),
        "pending": by_status.get(TargetStatus.PENDING, 0) + by_status.get(TargetStatus.SENDING, 0),
    }


def targets_partly_sent(*, run_id: int) -> int:
    """Targets still pending that have some of their parts out already."""
    return ReminderRunTarget.objects.filter(
        run_id=run_id, status__in=[TargetStatus.PENDING, TargetStatus.SENDING], parts_sent__gt=0
    ).count()


def reminder_run_counts_refresh(*, run: ReminderRun) -> ReminderRun:
    counts = target_counts(run_id=run.pk)
    ReminderRun.objects.filter(pk=run.pk).update(**counts)
    for name, value in counts.items():
        setattr(run, name, value)
    return run


def _locked(run: ReminderRun) -> ReminderRun:
    return ReminderRun.objects.select_for_update(of=("self",)).select_related("reminder", "account").get(pk=run.pk)


def _open_window_end(run: ReminderRun) -> datetime | None:
    """The end of the window open now (None: all day); refused while it is closed."""
    reminder = run.reminder
    daily = DeliveryWindow.of(reminder)
    now = clock.now()
    window = daily.containing(now)
    if window is None:
        opens = daily.next_start(now)
        raise ReminderStateError(
            f"The delivery window {daily.text} is closed; it opens at {daily.local_when(opens, now)} "
            f"({reminder.timezone}). Resume then, or turn on auto-resume."
        )
    return window.end_at


def _requeue(run: ReminderRun) -> ReminderRun:
    if run.reminder is None:
        raise ReminderStateError(f"Run #{run.pk}: its reminder “{run.reminder_name}” was deleted; it cannot go on.")
    problem = _account_problem(run.account)
    if problem:
        raise ReminderStateError(problem)
    run.window_end_at = _open_window_end(run)
    run.status = RunStatus.QUEUED
    run.worker_id = ""
    run.finished_at = None
    run.error = ""
    run.error_summary = ""
    run.save(update_fields=["status", "worker_id", "finished_at", "error", "error_summary", "window_end_at"])
    reminder_run_counts_refresh(run=run)
    transaction.on_commit(lambda: reminder_run_enqueue(run.pk))
    return run


@transaction.atomic
def reminder_run_resume(*, run: ReminderRun) -> ReminderRun:
    """Queue the same run again; only its pending targets are attempted, each from its next unsent part."""
    run = _locked(run)
    if run.status not in RESUMABLE:
        raise ReminderStateError(f"Run #{run.pk} is {run.status}; only a paused or failed run can be resumed.")
    if not run.targets.filter(status__in=[TargetStatus.PENDING, TargetStatus.SENDING]).exists():
        raise ReminderStateError(f"Run #{run.pk} has no pending groups left to send to.")
    return _requeue(run)


@transaction.atomic
def reminder_run_retry_failed(*, run: ReminderRun) -> ReminderRun:
    """Failed targets become pending again and the run is queued; each goes on at its first unsent part."""
    run = _locked(run)
    if run.status not in RETRYABLE:
        raise ReminderStateError(f"Run #{run.pk} is {run.status}; retry its failed groups once it has stopped.")
    failed = run.targets.filter(status=TargetStatus.FAILED)
    if not failed.exists():
        raise ReminderStateError(f"Run #{run.pk} has no failed groups.")
    if run.reminder is None:
        raise ReminderStateError(f"Run #{run.pk}: its reminder “{run.reminder_name}” was deleted; it cannot go on.")
    _open_window_end(run)  # check before changing anything
    failed.update(status=TargetStatus.PENDING, error="", finished_at=None)
    return _requeue(run)


def reminder_run_cancel(*, run: ReminderRun) -> ReminderRun:
    """Pending targets become skipped ("canceled by operator") and the run partial.

    A running worker notices at its next group and stops; what it has in flight finishes.
    """
    with transaction.atomic():
        run = _locked(run)
        if run.status not in CANCELABLE:
            raise ReminderStateError(f"Run #{run.pk} is {run.status}; there is nothing left to cancel.")
        now = clock.now()
        canceled = run.targets.filter(status=TargetStatus.PENDING).update(
            status=TargetStatus.SKIPPED, error=CANCELED, finished_at=now
        )
        if run.status != RunStatus.RUNNING:
            # left `sending` by a worker that died: its last part may or may not have gone out
            canceled += run.targets.filter(status=TargetStatus.SENDING).update(
                status=TargetStatus.SKIPPED, error=f"{CANCELED} (the send in flight may have gone through)"
            )
        if not canceled and run.status == RunStatus.FAILED:
            raise ReminderStateError(f"Run #{run.pk} has no pending groups to cancel.")
        reminder_run_counts_refresh(run=run)
        run.status = RunStatus.PARTIAL
        run.finished_at = now
        run.error_summary = (
            f"Canceled by operator: {run.sent} of {run.total} groups delivered, {run.skipped} skipped"
            + (f", {run.failed} failed." if run.failed else ".")
        )
        run.save(update_fields=["status", "finished_at", "error_summary"])
    reminder_run_notify(run=run)
    return run


def _window_opened(run: ReminderRun) -> bool:
    """A run the beat may start: waiting, or paused by a window that has closed since (never the same window)."""
    window = DeliveryWindow.of(run.reminder).containing(clock.now())
    if window is None:
        return False
    if run.status == WAITING:
        return True
    if run.window_end_at is None:
        return False
    return window.end_at is None or window.end_at > run.window_end_at


@transaction.atomic
def _start_waiting(run: ReminderRun) -> ReminderRun | None:
    run = _locked(run)
    if run.status != WAITING:
        return None  # canceled meanwhile
    return _requeue(run)


def _fail_waiting(run: ReminderRun, reason: str) -> None:
    """A waiting run whose account cannot send when its window opens fails, saying why (Resume once fixed)."""
    failed = ReminderRun.objects.filter(pk=run.pk, status=WAITING).update(
        status=RunStatus.FAILED, finished_at=clock.now(), error_summary=f"The delivery window opened, but {reason}"
    )
    if failed:
        run.refresh_from_db()
        reminder_run_notify(run=run)


def reminder_runs_auto_resume() -> list[int]:
    """What beat does every minute: start the runs waiting for their delivery window once it is open, and
    resume paused runs of auto-resume reminders once a new window has opened."""
    resumed = []
    waiting = ReminderRun.objects.filter(status=WAITING, reminder__isnull=False).select_related("reminder")
    for run in waiting:
        if _window_opened(run):
            try:
                started = _start_waiting(run)
            except ReminderStateError as exc:
                logger.warning("Reminder run #%s waited for its window and cannot start: %s", run.pk, exc)
                _fail_waiting(run, str(exc))
                continue
            if started is not None:
                resumed.append(run.pk)
    paused = ReminderRun.objects.filter(
        status=RunStatus.PAUSED, reminder__auto_resume=True, reminder__enabled=True
    ).select_related("reminder")
    for run in paused:
        if not _window_opened(run):
            continue
        try:
            reminder_run_resume(run=run)
        except ReminderStateError as exc:
            logger.warning("Auto-resume of reminder run #%s skipped: %s", run.pk, exc)
            continue
        resumed.append(run.pk)
    return resumed
