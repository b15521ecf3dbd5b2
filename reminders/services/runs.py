"""Reminder runs: firing one, its counters, and the operator's actions on it (resume, retry, cancel,
auto-resume)."""

import logging
import secrets
from datetime import datetime

from django.db import transaction
from django.db.models import Count

from accounts import pace
from accounts.models import AuthState, TelegramAccount
from core import clock, task_names
from core.errors import OperatorError
from core.models import RunStatus
from core.ratelimit import buckets_answer
from core.runs import run_task_send
from reminders.models import (
    ACTIVE,
    CANCELABLE,
    RESUMABLE,
    RETRYABLE,
    WAITING,
    PauseCause,
    Reminder,
    ReminderRun,
    ReminderRunTarget,
    RunTrigger,
    TargetStatus,
)
from reminders.schedule import (
    DeliveryWindow,
)
from reminders.services.audiences import audience_members_checked
from reminders.services.summaries import (
    reminder_run_notifications_resolve,
    reminder_run_notify,
    summary_account_resting,
    summary_canceled,
    summary_waiting,
)

logger = logging.getLogger(__name__)

CANCELED = "canceled by operator"
REMINDER_DELETED = "the reminder was deleted"


class ReminderStateError(OperatorError):
    """The action does not fit the reminder's or run's state; the message says what to do."""


# Runs -----------------------------------------------------------------------------------------------------------


def random_id_new() -> int:
    return secrets.randbits(63) or 1


def run_account_problem(account: TelegramAccount) -> str:
    """Why runs of the account cannot go on now; empty when they can."""
    if not account.is_active:
        return f"{account} is switched off; switch it on, then Resume."
    if account.auth_state != AuthState.AUTHENTICATED:
        return f"{account} cannot send ({account.get_auth_state_display()}); log it in again, then Resume."
    return pace.account_send_problem(account=account)


class ReminderRunActive(ReminderStateError):
    """Send now while a run of the reminder is still going: the operator is offered that run instead."""

    def __init__(self, run: ReminderRun):
        groups = f"{run.total} group{'' if run.total == 1 else 's'}"
        super().__init__(
            f"Run #{run.pk} of “{run.reminder_name}” is {run.outcome.label.lower()} ({run.sent} of {groups} "
            f"delivered); open or resume it. To send again to every group anyway, confirm “send again”."
        )
        self.run = run


def reminder_fire(*, reminder: Reminder, enqueue: bool = True, again: bool = False) -> ReminderRun:
    """Send now: a run with every target `pending`, in a constant number of queries: queued inside the delivery
    window, waiting for it outside (it starts by itself when the window opens), failed when the account cannot
    send. While a run of the reminder is queued, waiting, sending or paused, ReminderRunActive names it,
    unless `again` (the operator confirmed a second run to every group)."""
    return _fire(reminder, trigger=RunTrigger.MANUAL, enqueue=enqueue, slot=None, again=again)


def reminder_slot_fire(
    *, reminder: Reminder, slot: datetime, enqueue: bool = True, missed: str = ""
) -> ReminderRun | None:
    """The run of one schedule slot, made once: None when the slot has its run already (a second beat, a beat
    restarted before it saved its progress, a redelivered task), however many fire it at once. With `missed`
    (why), the run stands for a slot that can no longer go out: failed, every group pending, nothing sent."""
    if ReminderRun.objects.filter(reminder=reminder, slot=slot).exists():
        return None
    return _fire(reminder, trigger=RunTrigger.SCHEDULE, enqueue=enqueue, slot=slot, again=True, missed=missed)


def _fire(
    reminder: Reminder, *, trigger: str, enqueue: bool, slot: datetime | None, again: bool, missed: str = ""
) -> ReminderRun | None:
    now = clock.now()
    reminder = Reminder.objects.select_related("account").get(pk=reminder.pk)
    parts = list(reminder.parts.order_by("order").values("text", "media_id", "caption", "format", "album"))
    targets = list(reminder.targets.order_by("pk").values_list("chat_id", "topic_id"))
    audiences = [link.audience for link in reminder.audience_links.select_related("audience__account")]
    # An audience's members are checked now: one the account left, or that no longer matches, is skipped.
    members, skipped = audience_members_checked(audiences=audiences)
    targets = list(dict.fromkeys([*targets, *members]))
    skipped = {key: why for key, why in skipped.items() if key not in set(targets)}
    if not parts or not (targets or skipped):
        raise ReminderStateError(f"“{reminder}” has no {'parts' if not parts else 'groups'} to send.")
    window = DeliveryWindow.of(reminder).containing(now)
    account = reminder.account
    resting = bool(pace.account_send_problem(account=account))  # paused: it goes on after the rest
    summary = "" if resting else run_account_problem(account)
    status, cause = RunStatus.QUEUED, ""
    if missed:
        status, cause, summary = RunStatus.FAILED, PauseCause.MISSED, missed
    elif summary:
        status = RunStatus.FAILED
    elif window is None:
        status, summary = WAITING, summary_waiting(reminder=reminder, fired_at=now, now=now)
    elif resting:
        status = RunStatus.PAUSED
        cause = PauseCause.SENDING_STOPPED if account.sending_stopped else PauseCause.ACCOUNT_REST
        counts = {"sent": 0, "failed": 0, "pending": len(targets)}
        summary = summary_account_resting(run=None, account=account, counts=counts, partly=0, total=len(targets))
    with transaction.atomic():
        # One fire of a reminder at a time: two fires of a slot, or two Send now presses, see each other's run
        # (the unique (reminder, slot) constraint stays the last word).
        list(Reminder.objects.select_for_update().filter(pk=reminder.pk).values_list("pk"))
        if slot is not None and ReminderRun.objects.filter(reminder=reminder, slot=slot).exists():
            return None
        if not again:
            active = ReminderRun.objects.filter(reminder=reminder, status__in=ACTIVE).order_by("-pk").first()
            if active is not None:
                raise ReminderRunActive(active)
        run = ReminderRun.objects.create(
            reminder=reminder,
            reminder_name=reminder.name,
            account=reminder.account,
            trigger=trigger,
            slot=slot,
            parts=[
                {
                    "text": p["text"],
                    "media": p["media_id"],
                    "caption": p["caption"],
                    "format": p["format"],
                    "album": p["album"],
                }
                for p in parts
            ],
            total=len(targets) + len(skipped),
            pending=len(targets),
            skipped=len(skipped),
            options={
                "silent": reminder.silent,
                "link_preview": reminder.link_preview,
                "pin": reminder.pin,
                "replace_previous": reminder.replace_previous,
                "edit_in_place": reminder.edit_in_place,
            },
            fired_at=now,
            window_end_at=window.end_at if window else None,
            status=status,
            pause_cause=cause,
            finished_at=now if status in (RunStatus.FAILED, RunStatus.PAUSED) else None,
            error_summary=summary,
        )
        ReminderRunTarget.objects.bulk_create(
            ReminderRunTarget(run=run, chat_id=chat_id, topic_id=topic_id, random_ids=[random_id_new() for _ in parts])
            for chat_id, topic_id in targets
        )
        ReminderRunTarget.objects.bulk_create(
            ReminderRunTarget(
                run=run,
                chat_id=chat_id,
                topic_id=topic_id,
                random_ids=[random_id_new() for _ in parts],
                status=TargetStatus.SKIPPED,
                error=f"Skipped: {why}.",
                finished_at=now,
            )
            for (chat_id, topic_id), why in skipped.items()
        )
        if enqueue and status == RunStatus.QUEUED:
            transaction.on_commit(lambda: reminder_run_enqueue(run.pk))
    if status in (RunStatus.FAILED, RunStatus.PAUSED) and not missed:
        reminder_run_notify(run=run)  # a missed slot says so itself (services.slots)
    return run


def reminder_run_enqueue(run_id: int) -> None:
    run_task_send(task_names.REMINDER_RUN_EXECUTE, run_id)


WAITING_NOTE = "Waiting:"  # what a queued run says while its account is busy; gone once it starts


def reminder_run_wait_note(*, run_id: int) -> None:
    """A queued run whose account is busy says for what it waits, instead of a bare "waiting for a worker"."""
    run = ReminderRun.objects.filter(pk=run_id, status=RunStatus.QUEUED).select_related("account").first()
    if run is None:
        return
    others = ReminderRun.objects.filter(account_id=run.account_id).exclude(pk=run_id)
    sending = others.filter(status=RunStatus.RUNNING).order_by("pk").first()
    stopping = others.exclude(worker_id="").filter(finished_at__isnull=False).order_by("-finished_at").first()
    if sending is not None:
        note = f"{WAITING_NOTE} run #{sending.pk} of {run.account} is sending; this one starts when it ends."
    elif stopping is not None and (clock.now() - stopping.finished_at).total_seconds() < 60:
        note = f"{WAITING_NOTE} the account's previous run (#{stopping.pk}) is still stopping; this one starts next."
    else:
        note = f"{WAITING_NOTE} another task of {run.account} (an archive or package send) has its session."
    ReminderRun.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(error_summary=note)


def reminder_run_started(*, run: ReminderRun) -> None:
    """The run has its account: what it waited for is over."""
    if run.error_summary.startswith(WAITING_NOTE):
        ReminderRun.objects.filter(pk=run.pk, error_summary=run.error_summary).update(error_summary="")
        run.error_summary = ""


def reminder_run_next_send(*, run_id: int) -> None:
    """A run let go of its account: the account's oldest queued run starts now, not at its task's next retry."""
    account_id = ReminderRun.objects.filter(pk=run_id).values_list("account_id", flat=True).first()
    waiting = (
        ReminderRun.objects.filter(account_id=account_id, status=RunStatus.QUEUED)
        .exclude(pk=run_id)
        .order_by("pk")
        .values_list("pk", flat=True)
        .first()
    )
    if waiting is not None:
        reminder_run_enqueue(waiting)


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


def run_locked(run: ReminderRun) -> ReminderRun:
    return ReminderRun.objects.select_for_update(of=("self",)).select_related("reminder", "account").get(pk=run.pk)


def window_end_if_open(run: ReminderRun) -> datetime | None:
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
    problem = run_account_problem(run.account)
    if problem:
        raise ReminderStateError(problem)
    missed = run.pause_cause == PauseCause.MISSED
    run.window_end_at = window_end_if_open(run)
    run.status = RunStatus.QUEUED
    run.worker_id = ""
    run.finished_at = None
    run.error = ""
    run.error_summary = ""
    run.pause_cause = ""
    run.save(
        update_fields=["status", "worker_id", "finished_at", "error", "error_summary", "window_end_at", "pause_cause"]
    )
    reminder_run_counts_refresh(run=run)
    reminder_run_notifications_resolve(run=run, missed=missed)
    transaction.on_commit(lambda: reminder_run_enqueue(run.pk))
    return run


@transaction.atomic
def reminder_run_resume(*, run: ReminderRun) -> ReminderRun:
    """Queue the same run again; only its pending targets are attempted, each from its next unsent part."""
    run = run_locked(run)
    if run.status not in RESUMABLE:
        raise ReminderStateError(
            f"Run #{run.pk} is {run.outcome.label.lower()}; only a paused or failed run can be resumed."
        )
    if not run.targets.filter(status__in=[TargetStatus.PENDING, TargetStatus.SENDING]).exists():
        raise ReminderStateError(f"Run #{run.pk} has no pending groups left to send to.")
    return _requeue(run)


@transaction.atomic
def reminder_run_retry_failed(*, run: ReminderRun) -> ReminderRun:
    """Failed targets become pending again and the run is queued; each goes on at its first unsent part."""
    run = run_locked(run)
    if run.status not in RETRYABLE:
        raise ReminderStateError(
            f"Run #{run.pk} is {run.outcome.label.lower()}; retry its failed groups once it has stopped."
        )
    failed = run.targets.filter(status=TargetStatus.FAILED)
    if not failed.exists():
        raise ReminderStateError(f"Run #{run.pk} has no failed groups.")
    if run.reminder is None:
        raise ReminderStateError(f"Run #{run.pk}: its reminder “{run.reminder_name}” was deleted; it cannot go on.")
    window_end_if_open(run)  # check before changing anything
    failed.update(status=TargetStatus.PENDING, error="", finished_at=None)
    return _requeue(run)


def reminder_run_cancel(*, run: ReminderRun) -> ReminderRun:
    """Every group not delivered yet is skipped ("canceled by operator"), the ones cut part-way too (their parts
    sent are kept and shown), and the run is partial: counters, summary and rows say so at once. A running worker
    wakes from whatever it waits out within a second; a part on the wire that completes its group makes the group
    sent after all, and the worker's ending writes the counters and summary again (`reminder_run_cancel_settle`)."""
    with transaction.atomic():
        run = run_locked(run)
        if run.status not in CANCELABLE:
            raise ReminderStateError(f"Run #{run.pk} is {run.outcome.label.lower()}; there is nothing left to cancel.")
        now = clock.now()
        error = CANCELED
        if run.status != RunStatus.RUNNING:
            # left `sending` by a worker that died: its last part may or may not have gone out
            error = f"{CANCELED} (the send in flight may have gone through)"
        canceled = run.targets.filter(status=TargetStatus.SENDING).update(
            status=TargetStatus.SKIPPED, error=error, finished_at=now
        )
        canceled += run.targets.filter(status=TargetStatus.PENDING).update(
            status=TargetStatus.SKIPPED, error=CANCELED, finished_at=now
        )
        if not canceled and run.status == RunStatus.FAILED:
            raise ReminderStateError(f"Run #{run.pk} has no pending groups to cancel.")
        reminder_run_counts_refresh(run=run)
        run.status = RunStatus.PARTIAL
        run.finished_at = now
        run.error_summary = _canceled_summary(run)
        missed = run.pause_cause == PauseCause.MISSED
        run.pause_cause = ""
        run.save(update_fields=["status", "finished_at", "error_summary", "pause_cause"])
        # The operator ended it: what the bell said about it needs no one any more.
        reminder_run_notifications_resolve(run=run, missed=missed)
    return run


def _canceled_summary(run: ReminderRun) -> str:
    counts = {name: getattr(run, name) for name in ("sent", "failed", "skipped", "pending")}
    partly = run.targets.filter(status=TargetStatus.SKIPPED, parts_sent__gt=0).count()
    return summary_canceled(counts=counts, partly=partly)


def reminder_run_cancel_settle(*, run_id: int, progress: dict) -> None:
    """The worker of a run canceled (or paused) under it has stopped: its counters, and a canceled run's summary,
    from the groups as they ended (a part that was on the wire may have completed a group)."""
    with transaction.atomic():
        run = ReminderRun.objects.select_for_update().get(pk=run_id)
        fields = {**progress, **target_counts(run_id=run_id)}
        for name, value in fields.items():
            setattr(run, name, value)
        if run.status == RunStatus.PARTIAL and run.error_summary.startswith("Canceled by operator"):
            run.error_summary = _canceled_summary(run)
            fields["error_summary"] = run.error_summary
        ReminderRun.objects.filter(pk=run_id).update(**fields)


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
    run = run_locked(run)
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
    """What beat does every minute: start the runs waiting for their delivery window once it is open, resume
    paused runs of auto-resume reminders once a new window has opened, and runs an outage paused once Redis
    answers again."""
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
    # Only what the window paused: the operator's Pause, a rest or too many failures wait for a person (or the rest).
    paused = ReminderRun.objects.filter(
        status=RunStatus.PAUSED,
        pause_cause__in=[PauseCause.WINDOW, ""],
        reminder__auto_resume=True,
        reminder__enabled=True,
    ).select_related("reminder")
    resumable = [run for run in paused if _window_opened(run)] + _outage_over()
    for run in resumable:
        try:
            reminder_run_resume(run=run)
        except ReminderStateError as exc:
            logger.warning("Auto-resume of reminder run #%s skipped: %s", run.pk, exc)
            continue
        resumed.append(run.pk)
    return resumed


def _outage_over() -> list[ReminderRun]:
    """Runs an outage paused, once Redis answers again, inside the window they were in (or, for auto-resume
    reminders, a new one): the system stopped them, so the system goes on with them."""
    paused = list(
        ReminderRun.objects.filter(
            status=RunStatus.PAUSED, pause_cause=PauseCause.OUTAGE, reminder__enabled=True
        ).select_related("reminder")
    )
    if not paused or not buckets_answer():
        return []
    return [run for run in paused if _same_window_open(run) or (run.reminder.auto_resume and _window_opened(run))]


def _same_window_open(run: ReminderRun) -> bool:
    window = DeliveryWindow.of(run.reminder).containing(clock.now())
    return window is not None and window.end_at == run.window_end_at
