"""The run engine's heartbeat: its own thread and connection, and what it notices."""

import asyncio
import threading
import time

import psycopg
import pytest
from asgiref.sync import sync_to_async
from django.db import connection

from core import locks
from core.engine import RunEngine, WorkLost, WorkStopped
from core.leases import connection_params
from core.models import RunStatus
from core.runs import run_claim
from tests.claimtest.models import ProbeRun

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def quick_heartbeat(settings):
    settings.WORK_HEARTBEAT_SECONDS = 1


def _claimed() -> ProbeRun:
    return run_claim(model=ProbeRun, run_id=ProbeRun.objects.create().pk)


def test_the_heartbeat_beats_while_the_database_thread_is_busy():
    engine = RunEngine(run=_claimed())
    before = ProbeRun.objects.get(pk=engine.run.pk).heartbeat_at

    async def work():
        # A long step on the ORM thread (a volume written to the object store, say) blocks nothing else.
        await sync_to_async(time.sleep, thread_sensitive=True)(3.5)

    engine.drive(work)

    assert engine.heartbeat.beats >= 2
    assert ProbeRun.objects.get(pk=engine.run.pk).heartbeat_at > before


def test_a_lock_gone_with_its_connection_stops_the_work_at_once():
    engine = RunEngine(run=_claimed())
    with locks.advisory_lock(namespace=locks.ACCOUNT, name="engine-test") as acquired:
        assert acquired
        pid = connection.connection.info.backend_pid
        killer = threading.Timer(0.5, _terminate, args=[pid])
        killer.start()
        started = time.monotonic()
        with pytest.raises(WorkLost, match="account lock engine-test went with its database connection"):
            engine.drive(lambda: asyncio.sleep(60))  # a transfer, a FloodWait: whatever the work awaits
        killer.join()
    assert time.monotonic() - started < 3, "noticed within a heartbeat period, not at the end of the work"
    connection.close()
    engine.hand_back(engine.heartbeat.lost)
    run = ProbeRun.objects.get(pk=engine.run.pk)
    assert run.status == RunStatus.QUEUED and run.worker_id == ""
    assert run.error.startswith("Interrupted: The account lock engine-test went with its database connection")


def _terminate(pid: int) -> None:
    with psycopg.connect(**connection_params(), autocommit=True) as other:
        other.execute("SELECT pg_terminate_backend(%s)", [pid])


def test_a_run_taken_over_elsewhere_stops_its_old_worker():
    engine = RunEngine(run=_claimed())
    ProbeRun.objects.filter(pk=engine.run.pk).update(worker_id="elsewhere-1-1")

    with pytest.raises(WorkLost, match="Worker elsewhere-1-1 took the run over"):
        engine.drive(lambda: asyncio.sleep(60))


def test_the_operators_pause_stops_the_very_next_send():
    engine = RunEngine(run=_claimed())
    sent = []

    async def work():
        for message in range(3):
            await engine.guard()
            sent.append(message)
            if message == 0:
                await sync_to_async(ProbeRun.objects.filter(pk=engine.run.pk).update)(status=RunStatus.PAUSED)

    with pytest.raises(WorkStopped):
        engine.drive(work)
    assert sent == [0]


def test_progress_resets_the_requeue_count():
    run = _claimed()
    ProbeRun.objects.filter(pk=run.pk).update(requeue_count=2)
    engine = RunEngine(run=run)

    async def work():
        engine.progressed()
        await asyncio.sleep(1.5)

    engine.drive(work)

    assert ProbeRun.objects.get(pk=run.pk).requeue_count == 0


def test_a_run_without_progress_keeps_its_requeue_count():
    run = _claimed()
    ProbeRun.objects.filter(pk=run.pk).update(requeue_count=2)

    RunEngine(run=run).drive(lambda: asyncio.sleep(1.5))

    assert ProbeRun.objects.get(pk=run.pk).requeue_count == 2


def _heartbeat_backend(engine: RunEngine) -> int | None:
    """The server process of the heartbeat's own connection, found as an operator would: by its name."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s", [f"heartbeat {engine.heartbeat.label}"]
        )
        row = cursor.fetchone()
    return row[0] if row else None


def _heartbeat_backend_gone(engine: RunEngine, *, seconds: float = 5) -> bool:
    """The server process ends a moment after the connection's close reaches it, not at once."""
    deadline = time.monotonic() + seconds
    while _heartbeat_backend(engine) is not None:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_one_dropped_heartbeat_connection_keeps_the_run():
    engine = RunEngine(run=_claimed())
    killed = []

    async def work():
        pid = None
        for _ in range(30):  # its connection opens at the first beat
            await asyncio.sleep(0.1)
            if pid := await sync_to_async(_heartbeat_backend)(engine):
                break
        assert pid, "the heartbeat's connection says whose it is"
        await sync_to_async(_terminate)(pid)
        killed.append(pid)
        await asyncio.sleep(3)  # three periods: the beat after the drop fails, the retry within the period answers

    engine.drive(work)

    assert killed and engine.heartbeat.lost is None, "a blip is not a loss"
    run = ProbeRun.objects.get(pk=engine.run.pk)
    assert run.status == RunStatus.RUNNING and run.worker_id == engine.run.worker_id
    assert _heartbeat_backend_gone(engine), "the heartbeat closed its connection when the work ended"


def test_a_database_away_for_longer_than_a_period_still_loses_the_run(settings):
    engine = RunEngine(run=_claimed())
    engine.heartbeat.connect = lambda: (_ for _ in ()).throw(psycopg.OperationalError("connection refused"))

    with pytest.raises(WorkLost, match="The database did not answer for"):
        engine.drive(lambda: asyncio.sleep(60))


def test_cancel_wakes_the_run_from_its_wait_at_once():
    engine = RunEngine(run=_claimed())
    threading.Timer(0.5, lambda: ProbeRun.objects.filter(pk=engine.run.pk).update(status=RunStatus.PARTIAL)).start()
    started = time.monotonic()

    with pytest.raises(WorkStopped, match="canceled"):
        engine.drive(lambda: engine.sleep(60))  # a slow mode, a FloodWait, a pace: whatever the run waits out

    assert time.monotonic() - started < 2


def test_pause_interrupts_any_awaitable_the_run_waits_on(settings):
    settings.WORK_HEARTBEAT_SECONDS = 30  # the stop is noticed long before the next beat
    engine = RunEngine(run=_claimed())
    threading.Timer(0.5, lambda: ProbeRun.objects.filter(pk=engine.run.pk).update(status=RunStatus.PAUSED)).start()
    started = time.monotonic()

    with pytest.raises(WorkStopped, match="paused"):
        engine.drive(lambda: engine.interruptible(asyncio.Event().wait()))  # a Redis patience, a bucket's token

    assert time.monotonic() - started < 2
