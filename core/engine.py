"""The run engine: what every run that talks to Telegram stands on, written once.

An engine (the ingestion cycle, a reminder run's fan-out, a package send) holds its account's lock and its run's
claim, opens gateways under session leases, and does its work in one `asyncio.run`. `RunEngine.drive` runs that
work with a `Heartbeat`: a thread with a database connection of its own that, every WORK_HEARTBEAT_SECONDS,

- checks that every advisory lock and lease this process holds is still held by the connection that took it
  (a PostgreSQL restart, or a dropped connection, takes them away silently),
- proves the claim (heartbeat_at of the run, where it is still `running` under this worker), and
- notices when the operator paused or canceled the run, or another worker took it over.

A lost lock, lease or claim cancels the work at once, whatever it awaits (a transfer part, a FloodWait, a
database step), so nothing more goes to Telegram; the engine hands the run back (queued again, re-enqueued)
and logs why (its locks may be gone with a database that stays away).
The operator's Pause or Cancel is checked before every send (`RunEngine.guard`), and watched between beats (every
STOP_WATCH_SECONDS): it wakes every wait the work sleeps in (`RunEngine.sleep`, `RunEngine.interruptible`), so the
run stops within a second or so, and the message on the wire is counted by the engine's own ending. A failed beat
is tried again within the period: only the database silent for longer than a period counts as lost.
"""

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

import psycopg
from asgiref.sync import async_to_sync, sync_to_async
from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError
from django.db import connection as orm_connection
from django.utils import timezone

from core import locks
from core.leases import connection_params
from core.models import ClaimableRun, RunStatus
from core.runs import run_claim, run_hand_back, run_holds, run_take_over

logger = logging.getLogger(__name__)

T = TypeVar("T")

# How often, between beats, the heartbeat looks whether the operator paused or canceled the run (one primary-key
# read): a run asleep in a wait stops within about this long.
STOP_WATCH_SECONDS = 0.5
BUSY = "busy"  # another run holds the account, or another process its session: the task tries again later
# The database away (a restart, a dropped connection): an outage, never the fault of the item being worked on.
OUTAGES = (OperationalError, InterfaceError)

# Held locks whose connection no longer holds them (1-based positions in the arrays given).
_LOCKS_GONE = """
SELECT h.n FROM unnest(%s::int[], %s::bigint[], %s::bigint[]) WITH ORDINALITY AS h(pid, classid, objid, n)
WHERE NOT EXISTS (
  SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.pid = h.pid
    AND l.classid::bigint = h.classid AND l.objid::bigint = h.objid AND l.objsubid = 1
)
ORDER BY h.n
"""


_shutting_down = threading.Event()


def engine_shutdown_request() -> None:
    """The worker is shutting down warmly (SIGTERM): every engine of this process hands its run back at its next
    safe point (the part on the wire finishes), instead of leaving it to the reaper's wait."""
    _shutting_down.set()


class WorkInterrupted(Exception):
    """The run cannot go on in this worker; the message says why, in the operator's words."""


class WorkLost(WorkInterrupted):
    """A lock, a lease or the claim this work stood on is gone: stop before the next Telegram request."""


class WorkStopped(WorkInterrupted):
    """The operator paused or canceled the run: stop before the next message."""


def _lock_ids(key: int) -> tuple[int, int]:
    # An advisory lock on a bigint key shows in pg_locks as classid (high 32 bits) and objid (low 32 bits).
    unsigned = key & 0xFFFFFFFFFFFFFFFF
    return unsigned >> 32, unsigned & 0xFFFFFFFF


class Heartbeat:
    """Proves, on a timer and from a thread and connection of its own, that this worker still holds its run and
    every lock and lease it took; `lost` says why not, once it does not."""

    def __init__(self, *, run: ClaimableRun, period: float | None = None):
        self.table = type(run)._meta.db_table
        self.run_id = run.pk
        self.worker_id = run.worker_id
        self.label = f"{type(run).__name__} #{run.pk}"
        self.period = period or settings.WORK_HEARTBEAT_SECONDS
        self.lost: WorkInterrupted | None = None
        self.beats = 0
        self._progressed = False
        self._seen = False  # this connection has seen the run (only then is a missing row a deleted run)
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._callbacks: list[Callable[[WorkInterrupted], None]] = []

    def __enter__(self) -> "Heartbeat":
        self._thread = threading.Thread(target=self._beat_forever, name=f"heartbeat {self.label}", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stopping.set()
        self._thread.join()

    def progressed(self) -> None:
        """The run moved on: its re-queue count starts again at the next beat."""
        self._progressed = True

    def check(self) -> None:
        """Raise why the work must stop, if it must."""
        if self.lost is not None:
            raise self.lost

    def on_lost(self, callback: Callable[[WorkInterrupted], None]) -> Callable[[], None]:
        """Call back (from the heartbeat's thread) when the work is lost; returns how to stop calling back."""
        self._callbacks.append(callback)
        if self.lost is not None:
            callback(self.lost)
        return lambda: self._callbacks.remove(callback)

    def connect(self) -> psycopg.Connection:
        """The heartbeat's own connection, named so that pg_stat_activity says whose it is."""
        params = {"connect_timeout": max(1, round(self.period)), **connection_params()}
        return psycopg.connect(**params, autocommit=True, application_name=f"heartbeat {self.label}"[:63])

    def _beat_forever(self) -> None:
        """Beat every period and, between beats, watch the run's status every STOP_WATCH_SECONDS: the operator's
        Pause or Cancel wakes the work from whatever it waits out. A failed query is tried again within the period
        (a blip is not a loss); the database silent for longer than a period, counted from the first failure, is."""
        connection = None
        failing_since: float | None = None
        next_beat = time.monotonic() + self.period
        watch = min(STOP_WATCH_SECONDS, self.period)
        wait = watch
        while not self._stopping.wait(wait):
            now = time.monotonic()
            beating = now >= next_beat or failing_since is not None
            try:
                if connection is None:
                    connection = self.connect()
                lost = self._beat(connection) if beating else self._watch(connection)
                failing_since = None
                if beating:
                    next_beat = now + self.period
                wait = max(0.0, min(watch, next_beat - time.monotonic()))
            except psycopg.Error as exc:
                if connection is not None:
                    connection.close()
                    connection = None
                failing_since = now if failing_since is None else failing_since
                silent = time.monotonic() - failing_since
                if silent < self.period:
                    wait = min(1.0, self.period - silent)  # try again soon: a blip is not a loss
                    continue
                lost = WorkLost(
                    f"The database did not answer for {silent:.0f} s ({exc.__class__.__name__}); the locks of "
                    "this run may have gone with it."
                )
            if lost is not None:
                self._lose(lost)
                break
        if connection is not None:
            connection.close()

    def _watch(self, connection: psycopg.Connection) -> WorkInterrupted | None:
        row = connection.execute(f"SELECT status, worker_id FROM {self.table} WHERE id = %s", [self.run_id]).fetchone()
        if row == (RunStatus.RUNNING, self.worker_id):
            self._seen = True
            return None
        if row is None and not self._seen:
            return None  # not committed where this connection looks (a test's transaction): not deleted since
        return _why_not_ours(row, self.worker_id)

    def _beat(self, connection: psycopg.Connection) -> WorkInterrupted | None:
        held = locks.held_locks()
        if held:
            ids = [_lock_ids(lock.key) for lock in held]
            gone = connection.execute(
                _LOCKS_GONE,
                [[lock.backend_pid for lock in held], [classid for classid, _ in ids], [objid for _, objid in ids]],
            ).fetchall()
            if gone:
                what = held[gone[0][0] - 1].what
                return WorkLost(f"{what.capitalize()} went with its database connection (did PostgreSQL restart?).")
        progressed, self._progressed = self._progressed, False
        reset = ", requeue_count = 0" if progressed else ""
        beat = connection.execute(
            f"UPDATE {self.table} SET heartbeat_at = %s{reset} WHERE id = %s AND status = %s AND worker_id = %s",
            [timezone.now(), self.run_id, RunStatus.RUNNING, self.worker_id],
        )
        if beat.rowcount:
            self.beats += 1
            return None
        row = connection.execute(f"SELECT status, worker_id FROM {self.table} WHERE id = %s", [self.run_id]).fetchone()
        return _why_not_ours(row, self.worker_id)

    def _lose(self, lost: WorkInterrupted) -> None:
        self.lost = lost
        if isinstance(lost, WorkLost):
            logger.error("%s stops in worker %s: %s", self.label, self.worker_id, lost)
        else:
            logger.info("%s stops in worker %s: %s", self.label, self.worker_id, lost)
        for callback in list(self._callbacks):
            with contextlib.suppress(RuntimeError):  # its event loop has just ended: nothing left to stop
                callback(lost)


def _why_not_ours(row: tuple[str, str] | None, worker_id: str) -> WorkInterrupted:
    if row is None:
        return WorkStopped("The run was deleted.")
    status, holder = row
    if status == RunStatus.QUEUED:
        return WorkLost("The run was queued again after its heartbeat went quiet.")
    if status == RunStatus.RUNNING:
        return WorkLost(f"Worker {holder} took the run over.")
    if status == RunStatus.PAUSED:
        return WorkStopped("The run was paused.")
    return WorkStopped("The run was canceled or ended elsewhere.")


class RunEngine:
    """The base of every engine: `drive` its async work under a heartbeat, `guard` before each send, and hand the
    run back when the ground went from under it. Subclasses supply the work and their own ending."""

    def __init__(self, *, run: ClaimableRun):
        self.run = run
        self.heartbeat = Heartbeat(run=run)
        self._stopped: asyncio.Event | None = None  # set (on the work's loop) once the run must stop

    def drive(self, main: Callable[[], Awaitable[T]]) -> T:
        """Run `main` (the engine's async work) while the heartbeat beats. A lost lock, lease or claim cancels it
        at once (a request in flight is dropped; its random_id makes a resend safe) and raises WorkLost here."""

        async def guarded() -> T:
            task = asyncio.current_task()
            loop = asyncio.get_running_loop()

            self._stopped = asyncio.Event()

            def cancel(lost: WorkInterrupted) -> None:
                # Lost ground stops everything at once; the operator's stop wakes the waits, and the part on the
                # wire is let finish so that the engine's ending counts it.
                loop.call_soon_threadsafe(task.cancel if isinstance(lost, WorkLost) else self._stopped.set)

            forget = self.heartbeat.on_lost(cancel)
            try:
                return await main()
            except asyncio.CancelledError:
                if isinstance(self.heartbeat.lost, WorkLost):
                    raise self.heartbeat.lost from None
                raise
            except OUTAGES as exc:
                # The connection that holds the account's lock broke: the lock went with it.
                raise WorkLost(f"The database connection of this run broke ({exc}); its lock went with it.") from exc
            finally:
                forget()

        with self.heartbeat:
            return async_to_sync(guarded)()

    def check(self) -> None:
        """Before a Telegram request: stop if the claim, a lock or a lease was lost, the operator stopped the run,
        or the worker is shutting down."""
        self.heartbeat.check()
        if _shutting_down.is_set():
            raise WorkLost("The worker is shutting down (a deploy or a restart).")

    async def guard(self) -> None:
        """Before each message sent: `check`, and ask the database whether the run is still this worker's, so an
        operator's Pause or Cancel stops the very next message, not the next heartbeat's."""
        self.check()
        if not await sync_to_async(run_holds, thread_sensitive=True)(run=self.run):
            raise WorkStopped("The run was paused or canceled.")

    async def interruptible(self, awaitable: Awaitable[T]) -> T:
        """Await a wait (a slow mode, a FloodWait, a token of the pace, Redis coming back) that the operator's
        Pause or Cancel ends at once, raising WorkStopped."""
        work = asyncio.ensure_future(awaitable)
        stopped = asyncio.ensure_future(self._stopped.wait())
        try:
            await asyncio.wait({work, stopped}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopped.cancel()
            if not work.done():
                work.cancel()
                await asyncio.gather(work, return_exceptions=True)
        if work.cancelled():
            self.check()
        return work.result()

    async def sleep(self, seconds: float) -> None:
        """asyncio.sleep that the operator's Pause or Cancel cuts short (raising WorkStopped)."""
        await self.interruptible(asyncio.sleep(max(0.0, seconds)))

    def progressed(self) -> None:
        self.heartbeat.progressed()

    def hand_back(self, lost: WorkLost) -> bool:
        """Queue the run again at once (not after the reaper's wait), saying why; False when it is not ours any more.
        A database still coming back is waited for, up to the stale threshold (then the reaper queues it)."""
        deadline = time.monotonic() + settings.WORK_STALE_AFTER_SECONDS
        while True:
            try:
                if orm_connection.connection is not None and not orm_connection.is_usable():
                    orm_connection.close()  # the database restarted under it: the next query opens a new one
                return run_hand_back(run=self.run, error=f"Interrupted: {lost} Queued again.")
            except DatabaseError as exc:
                orm_connection.close()
                if time.monotonic() >= deadline:
                    logger.error("%s could not be queued again (%s); the reaper will.", self.heartbeat.label, exc)
                    return False
                time.sleep(1)


def run_engine_start(
    *,
    model: type[ClaimableRun],
    run_id: int,
    engine: Callable[..., "RunEngine"],
    lock_namespace: str = locks.FANOUT_ACCOUNT,
) -> str | None:
    """Take the run's account lock (one sending run per account), claim the run or take it over from a worker that
    is surely gone, and execute it: the engine's ending, BUSY (the account is busy, or the run's old worker may
    still be working), or None when there is nothing to do."""
    account_id = model.objects.filter(pk=run_id).values_list("account_id", flat=True).first()
    if account_id is None:
        return None
    with locks.advisory_lock(namespace=lock_namespace, name=str(account_id)) as acquired:
        if not acquired:
            return BUSY
        run = run_claim(model=model, run_id=run_id) or run_take_over(model=model, run_id=run_id)
        if run is None:
            if model.objects.filter(pk=run_id, status=RunStatus.RUNNING).exists():
                return BUSY  # its old worker lost the lock (a database restart) but may not have noticed yet
            return None  # another delivery already finished it, or it is paused or canceled
        return engine(run=run).execute()
