"""Stopping runs before harm is done: the operator's Pause, an account's rest (quarantine) and its stop switch
pausing every run of it, rests ending (runs resume by themselves unless the operator said otherwise), and
moving a paused run's pending groups to another account."""

import logging

from django.db import transaction
from django.urls import reverse

from accounts.models import AccountChat, TelegramAccount
from core import clock
from core.formatting import format_moment
from core.models import RunStatus
from core.notifications import notification_raise
from reminders.models import MOVABLE, PAUSABLE, PauseCause, ReminderRun, ReminderRunTarget, TargetStatus
from reminders.services import runs
from reminders.services.runs import (
    ReminderStateError,
    random_id_new,
    reminder_run_counts_refresh,
    reminder_run_resume,
    run_account_problem,
    run_locked,
    window_end_if_open,
)
from reminders.services.summaries import (
    reminder_run_notify,
    summary_account_resting,
    summary_moved,
    summary_paused_by_operator,
)

logger = logging.getLogger(__name__)


def reminder_run_pause(*, run: ReminderRun) -> ReminderRun:
    """The operator's Pause: a queued run does not start; a running one stops within a second, even asleep in a
    wait (the worker sees the run is no longer its own), every part sent so far kept: its groups in flight are
    pending again at once, and Resume goes on at each one's next part."""
    with transaction.atomic():
        run = run_locked(run)
        if run.status not in PAUSABLE:
            raise ReminderStateError(
                f"Run #{run.pk} is {run.outcome.label.lower()}; only a queued or running run can be paused."
            )
        now = clock.now()
        run.status = RunStatus.PAUSED
        run.pause_cause = PauseCause.OPERATOR
        run.finished_at = now
        run.error_summary = summary_paused_by_operator(run=run, at=now)
        run.save(update_fields=["status", "pause_cause", "finished_at", "error_summary"])
        run.targets.filter(status=TargetStatus.SENDING).update(status=TargetStatus.PENDING)
        reminder_run_counts_refresh(run=run)
    return run


def _pause_queued_runs(account: TelegramAccount, cause: str) -> list[int]:
    """Queued runs of the account pause with the reason; a running one stops itself at its next message (its
    bucket is halted) and writes its own ending."""
    paused = []
    with transaction.atomic():
        for run in ReminderRun.objects.select_for_update().filter(account=account, status=RunStatus.QUEUED):
            counts = {"sent": run.sent, "failed": run.failed, "pending": run.pending}
            run.status, run.pause_cause, run.finished_at = RunStatus.PAUSED, cause, clock.now()
            run.error_summary = summary_account_resting(run=run, account=account, counts=counts, partly=0)
            run.save(update_fields=["status", "pause_cause", "finished_at", "error_summary"])
            paused.append(run)
    for run in paused:
        reminder_run_notify(run=run)
    return [run.pk for run in paused]


def _resume_paused_runs(account: TelegramAccount, cause: str) -> list[int]:
    resumed = []
    for run in ReminderRun.objects.filter(account=account, status=RunStatus.PAUSED, pause_cause=cause):
        try:
            reminder_run_resume(run=run)
        except ReminderStateError as exc:
            logger.warning("Reminder run #%s stays paused after %s: %s", run.pk, cause, exc)
            continue
        resumed.append(run.pk)
    return resumed


def runs_pause_for_rest(*, account: TelegramAccount, reason: str) -> list[int]:
    """An account started resting (accounts.signals.account_rest_started): every run of it pauses, and the
    operator is told."""
    paused = _pause_queued_runs(account, PauseCause.ACCOUNT_REST)
    notification_raise(
        type="account_resting",
        severity="warning",
        title=f"{account} is resting until {format_moment(account.resting_until, dated=True)}",
        message=f"{reason}. Its runs are paused and resume by themselves after the rest, unless you say otherwise "
        "on the Accounts page.",
        subject=f"account-rest:{account.pk}",
        url=reverse("accounts:list"),
        context={"account": account.pk},
    )
    return paused


def runs_after_rest(*, account: TelegramAccount, resume_runs: bool) -> list[int]:
    """A rest ended (accounts.signals.account_rest_ended): the runs it paused resume, unless the operator said
    to keep them paused."""
    return _resume_paused_runs(account, PauseCause.ACCOUNT_REST) if resume_runs else []


def runs_after_sending_changed(*, account: TelegramAccount, stopped: bool) -> list[int]:
    """The operator stopped the account's sending (its runs pause; a running one at its next message), or
    allowed it again (the runs the stop paused resume, or wait for a rest still running)."""
    if stopped:
        return _pause_queued_runs(account, PauseCause.SENDING_STOPPED)
    if account.is_resting:
        ReminderRun.objects.filter(
            account=account, status=RunStatus.PAUSED, pause_cause=PauseCause.SENDING_STOPPED
        ).update(pause_cause=PauseCause.ACCOUNT_REST)
        return []
    return _resume_paused_runs(account, PauseCause.SENDING_STOPPED)


def _not_in_groups(account: TelegramAccount, chat_ids: set[int]) -> list[str]:
    known = set(AccountChat.objects.filter(account=account, chat_id__in=chat_ids).values_list("chat_id", flat=True))
    return list(
        ReminderRunTarget.objects.filter(chat_id__in=chat_ids - known)
        .order_by("chat__title")
        .values_list("chat__title", flat=True)
        .distinct()
    )


def reminder_run_move(*, run: ReminderRun, account: TelegramAccount) -> ReminderRun:
    """Hand a stopped run's pending groups to another account that is in every one of them, as a new linked run
    (queued now); the old run ends partial and says where they went. A group started part-way goes on at its
    next part."""
    with transaction.atomic():
        run = run_locked(run)
        if run.status not in MOVABLE or run.reminder_id is None:
            raise ReminderStateError(
                f"Run #{run.pk} is {run.outcome.label.lower()}; pause it first, then move its pending groups."
                if run.reminder_id
                else f"Run #{run.pk}: its reminder “{run.reminder_name}” was deleted; it cannot go on."
            )
        if account.pk == run.account_id:
            raise ReminderStateError(f"Run #{run.pk} already sends from {account}; pick another account.")
        problem = run_account_problem(account)
        if problem:
            raise ReminderStateError(problem)
        pending = list(run.targets.filter(status=TargetStatus.PENDING).order_by("pk"))
        if not pending:
            raise ReminderStateError(f"Run #{run.pk} has no pending groups to move.")
        missing = _not_in_groups(account, {target.chat_id for target in pending})
        if missing:
            named = ", ".join(f"“{title}”" for title in missing[:5]) + (" …" if len(missing) > 5 else "")
            raise ReminderStateError(
                f"{account} is not in {len(missing)} of these groups ({named}); refresh its chats on the Accounts "
                "page, or pick an account that is in all of them."
            )
        window_end = window_end_if_open(run)
        now = clock.now()
        moved = ReminderRun.objects.create(
            reminder=run.reminder,
            reminder_name=run.reminder_name,
            account=account,
            trigger=run.trigger,
            parts=run.parts,
            options=run.options,
            total=len(pending),
            pending=len(pending),
            fired_at=now,
            window_end_at=window_end,
            status=RunStatus.QUEUED,
            moved_from=run,
        )
        ReminderRunTarget.objects.bulk_create(
            ReminderRunTarget(
                run=moved,
                chat_id=target.chat_id,
                topic_id=target.topic_id,
                random_ids=[random_id_new() for _ in target.random_ids],  # random_ids are per sender
                parts_sent=target.parts_sent,
                message_ids=target.message_ids,
                album_ids=target.album_ids,
                previous_removed=target.previous_removed,
            )
            for target in pending
        )
        run.targets.filter(pk__in=[target.pk for target in pending]).update(
            status=TargetStatus.SKIPPED, error=f"moved to run #{moved.pk} ({account})", finished_at=now
        )
        reminder_run_counts_refresh(run=run)
        run.status, run.pause_cause, run.finished_at = RunStatus.PARTIAL, "", now
        run.error_summary = summary_moved(run=run, moved=len(pending), to_run=moved)
        run.save(update_fields=["status", "pause_cause", "finished_at", "error_summary"])
        transaction.on_commit(lambda: runs.reminder_run_enqueue(moved.pk))
    return moved
