"""Claim, heartbeat, finish and reap services for every ClaimableRun, and how services enqueue their run's task."""

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from celery import signature
from django.conf import settings
from django.db import connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from core.formatting import format_moment
from core.models import ClaimableRun, RunStatus
from core.notifications import RUN_REQUEUED, notifications_resolve, notify_run_reaped, run_subject
from core.workers import worker_gone, worker_id

logger = logging.getLogger(__name__)


def run_claim(*, model: type[ClaimableRun], run_id: int) -> ClaimableRun | None:
    """Claim one queued run; None when another delivery got there first."""
    now = timezone.now()
    claimed = model.objects.filter(pk=run_id, status=RunStatus.QUEUED).update(
        status=RunStatus.RUNNING, worker_id=worker_id(), claimed_at=now, heartbeat_at=now
    )
    if not claimed:
        return None
    return model.objects.get(pk=run_id)


def run_take_over(*, model: type[ClaimableRun], run_id: int) -> ClaimableRun | None:
    """Claim a run still `running` whose worker has surely stopped; None when there is none, or when its worker
    may still be working (then try again later: never two holders at once).

    The caller holds the lock every live worker of that run would hold, but a PostgreSQL restart frees that lock
    under a worker still alive, which stops only at its next heartbeat. So the holder must be known gone: its
    process is no more (same host), or its heartbeat has been quiet for two periods (a live holder beats every
    period, and stops itself once it cannot). Compare-and-set on the old worker_id: one taker wins."""
    run = model.objects.filter(pk=run_id, status=RunStatus.RUNNING).first()
    if run is None:
        return None
    now = timezone.now()
    candidates = model.objects.filter(pk=run_id, status=RunStatus.RUNNING, worker_id=run.worker_id)
    if not worker_gone(run.worker_id):
        quiet = now - timedelta(seconds=2 * settings.WORK_HEARTBEAT_SECONDS + 1)
        candidates = candidates.filter(Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=quiet))
    taken = candidates.update(
        worker_id=worker_id(),
        claimed_at=now,
        heartbeat_at=now,
        requeue_count=F("requeue_count") + 1,
        error=f"Taken over from worker {run.worker_id}, which stopped mid-run.",
    )
    if not taken:
        return None
    logger.warning("%s #%s: taken over from worker %s, which stopped mid-run", model.__name__, run_id, run.worker_id)
    return model.objects.get(pk=run_id)


def run_task_send(task_name: str, run_id: int, *, countdown: int = 0) -> None:
    """Send a run's task by its name: services never import tasks (tasks import services). Call it after
    commit (transaction.on_commit); the task's route, queue and retries stay with the task."""
    signature(task_name, args=[run_id]).apply_async(countdown=countdown)


def run_claim_next(*, model: type[ClaimableRun], **filters) -> ClaimableRun | None:
    """Claim the oldest queued run matching filters, skipping rows others are claiming.

    One statement (UPDATE … WHERE id = (SELECT … FOR UPDATE SKIP LOCKED) RETURNING …):
    one round trip per claim, however many workers compete.
    """
    candidates = model.objects.filter(status=RunStatus.QUEUED, **filters).order_by("pk").values("pk")[:1]
    select_sql, select_params = candidates.query.sql_with_params()
    quote = connection.ops.quote_name
    columns = ", ".join(quote(field.column) for field in model._meta.concrete_fields)
    now = timezone.now()
    sql = (
        f"UPDATE {quote(model._meta.db_table)} SET status = %s, worker_id = %s, claimed_at = %s, heartbeat_at = %s "
        f"WHERE id = ({select_sql} FOR UPDATE SKIP LOCKED) RETURNING {columns}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [RunStatus.RUNNING, worker_id(), now, now, *select_params])
        row = cursor.fetchone()
    if row is None:
        return None
    return model.from_db(connection.alias, [field.attname for field in model._meta.concrete_fields], row)


def run_holds(*, run: ClaimableRun) -> bool:
    """Whether this worker still holds the run (the operator has not paused or canceled it, nobody took it)."""
    return type(run).objects.filter(pk=run.pk, status=RunStatus.RUNNING, worker_id=run.worker_id).exists()


def run_hand_back(*, run: ClaimableRun, error: str = "", enqueue: bool = True) -> bool:
    """Give a run this worker holds back to the queue (and send its task again, unless the caller's task retries
    itself); False when it is not ours any more. Without an error nothing happened to the run (its session was
    busy elsewhere); with one, the work stopped part-way (a lost lock, a warm shutdown) and the run says why."""
    fields = {"error": error} if error else {}
    handed = (
        type(run)
        .objects.filter(pk=run.pk, status=RunStatus.RUNNING, worker_id=run.worker_id)
        .update(status=RunStatus.QUEUED, worker_id="", **fields)
    )
    if not handed:
        return False
    run.status, run.worker_id = RunStatus.QUEUED, ""
    if error:
        logger.warning("%s #%s handed back to the queue: %s", type(run).__name__, run.pk, error)
    kind = _KINDS.get(type(run)._meta.label)
    if enqueue and kind is not None:
        transaction.on_commit(lambda: kind.enqueue(run.pk))
    return True


def run_finish(*, run: ClaimableRun, status: str, error: str = "", **fields) -> bool:
    """End a run this worker holds; False when it no longer holds it."""
    if status not in {RunStatus.SUCCESS, RunStatus.PARTIAL, RunStatus.FAILED, RunStatus.PAUSED}:
        raise ValueError(f"{status!r} is not an ending a run can finish with")
    now = timezone.now()
    updated = (
        type(run)
        .objects.filter(pk=run.pk, status=RunStatus.RUNNING, worker_id=run.worker_id)
        .update(status=status, error=error, finished_at=now, **fields)
    )
    if updated:
        run.status, run.error, run.finished_at = status, error, now
        for name, value in fields.items():
            setattr(run, name, value)
        if status == RunStatus.SUCCESS:
            # A re-queued run that went through on another worker needs no one any more.
            notifications_resolve(subject=run_subject(run), types=[RUN_REQUEUED])
    return bool(updated)


@dataclass
class ReapResult:
    requeued: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)


def runs_stuck(*, now: datetime | None = None, stale_after: timedelta | None = None) -> Q:
    """The one rule for "its worker is gone": running, and no heartbeat for WORK_STALE_AFTER_SECONDS (or none at
    all). The reaper queues these runs again; the dashboard, /metrics and the API count them as stuck."""
    if stale_after is None:
        stale_after = timedelta(seconds=settings.WORK_STALE_AFTER_SECONDS)
    cutoff = (now or timezone.now()) - stale_after
    return Q(status=RunStatus.RUNNING) & (Q(heartbeat_at__lt=cutoff) | Q(heartbeat_at__isnull=True))


def runs_reap(
    *,
    model: type[ClaimableRun],
    max_requeues: int,
    stale_after: timedelta | None = None,
    enqueue: Callable[[int], None] | None = None,
) -> ReapResult:
    """Re-queue (or fail, after max_requeues) the stuck runs (`runs_stuck`), and at once those whose holder
    ran on this host and is no more (a crashed worker that `make run` started again): no waiting out the
    heartbeat."""
    result = ReapResult()
    with transaction.atomic():
        running = model.objects.select_for_update(skip_locked=True).filter(status=RunStatus.RUNNING)
        stuck = set(running.filter(runs_stuck(stale_after=stale_after)).values_list("pk", flat=True))
        stale = [run for run in running.order_by("pk") if run.pk in stuck or worker_gone(run.worker_id)]
        for run in stale:
            if run.requeue_count >= max_requeues:
                run.status = RunStatus.FAILED
                run.finished_at = timezone.now()
                last = format_moment(run.heartbeat_at, seconds=True, dated=True) if run.heartbeat_at else "none"
                run.error = (
                    f"Worker {run.worker_id} stopped answering (last heartbeat {last}) and the run was already "
                    f"re-queued {run.requeue_count} times."
                )
                result.failed.append(run.pk)
            else:
                run.status = RunStatus.QUEUED
                run.requeue_count += 1
                how = "stopped answering" if run.pk in stuck else "ended"
                run.error = f"Re-queued after worker {run.worker_id} {how}."
                result.requeued.append(run.pk)
            run.worker_id = ""
            run.save(update_fields=["status", "finished_at", "error", "requeue_count", "worker_id"])
            logger.warning("Reaped %s #%s: %s", model.__name__, run.pk, run.error)
            notify_run_reaped(run=run, requeued=run.status == RunStatus.QUEUED)
        if enqueue is not None:
            for run_id in result.requeued:
                transaction.on_commit(lambda run_id=run_id: enqueue(run_id))
    return result


def runs_reap_stale() -> dict[str, ReapResult]:
    """Reap every registered kind of run (beat does it every minute; the dashboard's "Re-queue now" too)."""
    return {
        kind.model._meta.label: runs_reap(
            model=kind.model,
            max_requeues=settings.WORK_MAX_REQUEUES,
            enqueue=kind.enqueue,
        )
        for kind in run_kinds()
    }


def runs_resend_forgotten(
    *, model: type[ClaimableRun], older_than: timedelta, enqueue: Callable[[int], None]
) -> list[int]:
    """Send the task again for runs queued long ago, in case the broker lost it (a flushed Redis).

    Harmless when the first task still waits: whichever delivery comes second finds nothing to claim.
    For a queued run, heartbeat_at remembers when its task was last sent again.
    """
    now = timezone.now()
    cutoff = now - older_than
    with transaction.atomic():
        forgotten = list(
            model.objects.select_for_update(skip_locked=True)
            .filter(status=RunStatus.QUEUED, created_at__lt=cutoff)
            .filter(Q(heartbeat_at__isnull=True) | Q(heartbeat_at__lt=cutoff))
            .values_list("pk", flat=True)
        )
        model.objects.filter(pk__in=forgotten).update(heartbeat_at=now)
        for run_id in forgotten:
            logger.warning(
                "%s #%s has waited in the queue since before %s; sending its task again.",
                model.__name__,
                run_id,
                cutoff,
            )
            transaction.on_commit(lambda run_id=run_id: enqueue(run_id))
    return forgotten


@dataclass(frozen=True)
class RunKind:
    model: type[ClaimableRun]
    enqueue: Callable[[int], None]


_KINDS: dict[str, RunKind] = {}


def run_kind_register(*, model: type[ClaimableRun], enqueue: Callable[[int], None]) -> None:
    """Apps register their run models (in AppConfig.ready) so the reaper sees them."""
    _KINDS[model._meta.label] = RunKind(model=model, enqueue=enqueue)


def run_kinds() -> list[RunKind]:
    return list(_KINDS.values())
