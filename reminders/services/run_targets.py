"""What the fan-out records as it goes: the run's progress, each group started, each step of it, its ending.

Each write is one conditional UPDATE: the WHERE clauses are what make a step happen once, whichever worker
or operator moved first.
"""

from django.db.models import F, Q
from django.utils import timezone

from core.models import RunStatus
from reminders.models import ReminderRun, ReminderRunTarget, TargetStatus


def reminder_run_progress_record(*, run_id: int, progress: dict[str, int | float]) -> None:
    """The run's counters and time spent, as the worker sees them."""
    ReminderRun.objects.filter(pk=run_id).update(**progress)


def run_target_start(*, target: ReminderRunTarget, run: ReminderRun) -> bool:
    """The group goes out now: False when it was canceled meanwhile, or the run is no longer this worker's."""
    return bool(
        ReminderRunTarget.objects.filter(
            pk=target.pk,
            status__in=[TargetStatus.PENDING, TargetStatus.SENDING],
            run__status=RunStatus.RUNNING,
            run__worker_id=run.worker_id,
        ).update(status=TargetStatus.SENDING, attempts=F("attempts") + 1)
    )


def reminder_run_still_held(*, run: ReminderRun) -> bool:
    """The run is still running on this worker (the operator did not pause or cancel it)."""
    return ReminderRun.objects.filter(pk=run.pk, status=RunStatus.RUNNING, worker_id=run.worker_id).exists()


def run_target_step_done(*, target: ReminderRunTarget, step: str) -> None:
    """A once-only step of the group (pinned) is done."""
    ReminderRunTarget.objects.filter(pk=target.pk).update(**{step: True})


def run_target_previous_record(*, target: ReminderRunTarget, post: str, note: str, done: bool) -> None:
    """What Replace does with the group's previous post, recorded before it is done."""
    ReminderRunTarget.objects.filter(pk=target.pk).update(previous_post=post, previous_note=note, previous_removed=done)


def run_target_part_sent(*, target: ReminderRunTarget, parts_sent: int) -> None:
    """The group's parts out so far, with their message ids: a resume goes on at the next part."""
    ReminderRunTarget.objects.filter(pk=target.pk).update(
        parts_sent=parts_sent, message_ids=target.message_ids, album_ids=target.album_ids
    )


def run_target_end(
    *, target: ReminderRunTarget, status: str, error: str, latency_ms: int | None, parts_total: int
) -> None:
    """The group's outcome; pending again when it stopped part-way. What the operator decided meanwhile stands
    (a group Cancel skipped, or Pause made pending, stays so), unless every part went out: then it was sent."""
    finished = None if status == TargetStatus.PENDING else timezone.now()
    sent = {"parts_sent": parts_total} if status == TargetStatus.SENT else {}
    posted = {"message_ids": target.message_ids, "album_ids": target.album_ids}
    still = [TargetStatus.SENDING, TargetStatus.PENDING, TargetStatus.SKIPPED] if sent else [TargetStatus.SENDING]
    ended = ReminderRunTarget.objects.filter(pk=target.pk, status__in=still).update(
        status=status, error=error[:2000], latency_ms=latency_ms, finished_at=finished, **posted, **sent
    )
    if not ended:  # what went out is recorded all the same
        ReminderRunTarget.objects.filter(pk=target.pk).update(**posted)


def run_targets_in_flight_release(*, run: ReminderRun) -> None:
    """The worker has stopped every group (a crash, a stop of its own): none of an ended run stays `sending`; each
    goes on at its next part if the run is resumed. Never the groups of another worker that took the run over."""
    taken_over = Q(run__status=RunStatus.RUNNING) & ~Q(run__worker_id=run.worker_id)
    ReminderRunTarget.objects.filter(run_id=run.pk, status=TargetStatus.SENDING).exclude(taken_over).update(
        status=TargetStatus.PENDING
    )
