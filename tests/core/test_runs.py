import socket
import subprocess
import sys
from datetime import timedelta

import pytest
from django.utils import timezone

from core.models import RunStatus
from core.runs import (
    run_claim,
    run_claim_next,
    run_finish,
    run_holds,
    run_take_over,
    runs_reap,
    runs_stuck,
)
from core.workers import worker_id
from tests.claimtest.models import ProbeRun

pytestmark = pytest.mark.django_db


def test_claim_records_the_worker_and_a_second_delivery_finds_nothing():
    run = ProbeRun.objects.create()

    claimed = run_claim(model=ProbeRun, run_id=run.pk)

    assert claimed.status == RunStatus.RUNNING
    assert claimed.worker_id == worker_id()
    assert claimed.claimed_at is not None and claimed.heartbeat_at is not None
    assert run_claim(model=ProbeRun, run_id=run.pk) is None


def test_claim_next_takes_the_oldest_queued_run():
    older, newer = ProbeRun.objects.create(), ProbeRun.objects.create()
    ProbeRun.objects.create(status=RunStatus.SUCCESS)

    assert run_claim_next(model=ProbeRun).pk == older.pk
    assert run_claim_next(model=ProbeRun).pk == newer.pk
    assert run_claim_next(model=ProbeRun) is None


def test_a_run_taken_away_is_no_longer_held():
    run = run_claim(model=ProbeRun, run_id=ProbeRun.objects.create().pk)
    assert run_holds(run=run)

    ProbeRun.objects.filter(pk=run.pk).update(status=RunStatus.QUEUED, worker_id="")

    assert not run_holds(run=run)
    assert not run_finish(run=run, status=RunStatus.SUCCESS)
    assert ProbeRun.objects.get(pk=run.pk).status == RunStatus.QUEUED


def test_finish_records_the_ending():
    run = run_claim(model=ProbeRun, run_id=ProbeRun.objects.create().pk)

    assert run_finish(run=run, status=RunStatus.PARTIAL, error="2 of 3 done")

    stored = ProbeRun.objects.get(pk=run.pk)
    assert (stored.status, stored.error) == (RunStatus.PARTIAL, "2 of 3 done")
    assert stored.finished_at is not None and stored.is_over


def test_finish_refuses_a_status_that_is_not_an_ending():
    run = run_claim(model=ProbeRun, run_id=ProbeRun.objects.create().pk)
    with pytest.raises(ValueError):
        run_finish(run=run, status=RunStatus.QUEUED)


def test_reap_requeues_stale_runs_then_fails_them(django_capture_on_commit_callbacks):
    stale_at = timezone.now() - timedelta(minutes=10)
    stale = ProbeRun.objects.create(status=RunStatus.RUNNING, worker_id="gone-1-1", heartbeat_at=stale_at)
    worn_out = ProbeRun.objects.create(
        status=RunStatus.RUNNING, worker_id="gone-2-1", heartbeat_at=stale_at, requeue_count=3
    )
    alive = ProbeRun.objects.create(status=RunStatus.RUNNING, worker_id="here-1-1", heartbeat_at=timezone.now())
    enqueued = []

    with django_capture_on_commit_callbacks(execute=True):
        result = runs_reap(model=ProbeRun, stale_after=timedelta(minutes=5), max_requeues=3, enqueue=enqueued.append)

    assert result.requeued == [stale.pk] and result.failed == [worn_out.pk]
    assert enqueued == [stale.pk]
    stale.refresh_from_db()
    worn_out.refresh_from_db()
    alive.refresh_from_db()
    assert (stale.status, stale.requeue_count, stale.worker_id) == (RunStatus.QUEUED, 1, "")
    assert worn_out.status == RunStatus.FAILED and "gone-2-1" in worn_out.error
    assert alive.status == RunStatus.RUNNING


def test_reap_requeues_at_once_a_run_whose_process_on_this_host_is_gone(django_capture_on_commit_callbacks):
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    crashed = ProbeRun.objects.create(
        status=RunStatus.RUNNING,
        worker_id=f"{socket.gethostname()}-{ended.stdout.strip()}-1",
        heartbeat_at=timezone.now(),  # it beat a moment ago, then was killed
    )
    alive = ProbeRun.objects.create(status=RunStatus.RUNNING, worker_id=worker_id(), heartbeat_at=timezone.now())
    elsewhere = ProbeRun.objects.create(
        status=RunStatus.RUNNING, worker_id="other-host-12-1", heartbeat_at=timezone.now()
    )
    enqueued = []

    with django_capture_on_commit_callbacks(execute=True):
        result = runs_reap(model=ProbeRun, stale_after=timedelta(minutes=5), max_requeues=3, enqueue=enqueued.append)

    assert result.requeued == enqueued == [crashed.pk]
    assert ProbeRun.objects.get(pk=crashed.pk).status == RunStatus.QUEUED
    assert {ProbeRun.objects.get(pk=run.pk).status for run in (alive, elsewhere)} == {RunStatus.RUNNING}


def test_runs_queued_long_ago_get_their_task_sent_again_once_a_period(django_capture_on_commit_callbacks):
    from core.runs import runs_resend_forgotten

    old = ProbeRun.objects.create(created_at=timezone.now() - timedelta(hours=2))
    ProbeRun.objects.create()  # queued a moment ago: its task is surely still on its way
    ProbeRun.objects.create(created_at=timezone.now() - timedelta(hours=2), status=RunStatus.RUNNING)
    sent = []

    with django_capture_on_commit_callbacks(execute=True):
        assert runs_resend_forgotten(model=ProbeRun, older_than=timedelta(minutes=30), enqueue=sent.append) == [old.pk]
        assert runs_resend_forgotten(model=ProbeRun, older_than=timedelta(minutes=30), enqueue=sent.append) == []

    assert sent == [old.pk]
    assert ProbeRun.objects.get(pk=old.pk).status == RunStatus.QUEUED


def _held_by(holder: str, *, quiet_seconds: float) -> ProbeRun:
    return ProbeRun.objects.create(
        status=RunStatus.RUNNING, worker_id=holder, heartbeat_at=timezone.now() - timedelta(seconds=quiet_seconds)
    )


def test_a_run_whose_worker_may_still_work_is_not_taken_over_until_its_heartbeat_is_quiet(settings):
    settings.WORK_HEARTBEAT_SECONDS = 5
    alive = worker_id()  # this very process: alive, and it lost its lock to a database restart, say
    run = _held_by(alive, quiet_seconds=6)

    assert run_take_over(model=ProbeRun, run_id=run.pk) is None, "one missed beat: it may be about to notice"
    assert ProbeRun.objects.get(pk=run.pk).worker_id == alive

    ProbeRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(seconds=12))
    taken = run_take_over(model=ProbeRun, run_id=run.pk)
    assert taken is not None and taken.requeue_count == 1, "two periods quiet: it stopped itself"


def test_a_run_on_another_host_waits_for_its_heartbeat_to_go_quiet(settings):
    settings.WORK_HEARTBEAT_SECONDS = 5

    assert run_take_over(model=ProbeRun, run_id=_held_by("other-host-12-1", quiet_seconds=1).pk) is None
    assert run_take_over(model=ProbeRun, run_id=_held_by("other-host-12-1", quiet_seconds=20).pk) is not None


def test_a_run_whose_process_is_gone_is_taken_over_at_once(settings):
    settings.WORK_HEARTBEAT_SECONDS = 5
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    gone = f"{socket.gethostname()}-{ended.stdout.strip()}-1"

    taken = run_take_over(model=ProbeRun, run_id=_held_by(gone, quiet_seconds=0).pk)

    assert taken is not None and taken.worker_id == worker_id()


def test_a_running_run_that_never_beat_is_stuck_and_the_reaper_queues_it_again():
    never = ProbeRun.objects.create(status=RunStatus.RUNNING, worker_id="gone-3-1", heartbeat_at=None)
    ProbeRun.objects.create(status=RunStatus.RUNNING, worker_id="here-1-1", heartbeat_at=timezone.now())
    ProbeRun.objects.create(status=RunStatus.QUEUED, heartbeat_at=None)

    assert list(ProbeRun.objects.filter(runs_stuck()).values_list("pk", flat=True)) == [never.pk]

    result = runs_reap(model=ProbeRun, stale_after=timedelta(minutes=5), max_requeues=3)

    assert result.requeued == [never.pk]
    never.refresh_from_db()
    assert never.status == RunStatus.QUEUED and "gone-3-1" in never.error


def test_a_run_is_live_while_queued_or_running_and_a_reminder_run_while_waiting_too():
    from reminders.models import WAITING, ReminderRun

    assert [status for status in RunStatus if ProbeRun(status=status).is_live] == [RunStatus.QUEUED, RunStatus.RUNNING]
    assert ReminderRun(status=WAITING).is_live and not ReminderRun(status=RunStatus.PAUSED).is_live
