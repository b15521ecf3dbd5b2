"""Session leases: one holder at a time, a bounded wait, a waiter the holder can see, gone with its process,
and kept from a second opener when a database restart frees the lock under a live holder."""

import asyncio
import os
import socket
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from asgiref.sync import sync_to_async
from django.db import connection

from core.leases import SessionBusy, session_lease
from core.locks import held_locks
from core.workers import worker_id

pytestmark = pytest.mark.django_db


def test_a_second_opener_waits_a_bounded_time_and_the_holder_sees_it_waiting():
    async def main():
        async with session_lease("+15550000001", wait_seconds=0) as held:
            assert not await held.wanted()

            async def second():
                async with session_lease("+15550000001", wait_seconds=0.6):
                    pass

            waiter = asyncio.create_task(second())
            await asyncio.sleep(0.3)
            assert await held.wanted(), "the holder sees someone waiting for the session"
            started = time.monotonic()
            with pytest.raises(SessionBusy, match="stayed in use"):
                await waiter
            assert time.monotonic() - started < 1
            assert not await held.wanted()
            with pytest.raises(SessionBusy):
                async with session_lease("+15550000001", wait_seconds=0):
                    pass
            async with session_lease("+15550000002", wait_seconds=0):  # another account's session is free
                pass

    asyncio.run(main())


def test_a_waiter_gets_the_session_as_soon_as_the_holder_lets_go():
    async def main():
        order = []
        async with session_lease("+15550000001", wait_seconds=0) as held:

            async def second():
                async with session_lease("+15550000001", wait_seconds=5):
                    order.append("second")

            waiter = asyncio.create_task(second())
            while not await held.wanted():
                await asyncio.sleep(0.01)
            order.append("first lets go")
        await waiter
        return order

    assert asyncio.run(main()) == ["first lets go", "second"]


def test_a_process_that_dies_holding_a_session_lets_it_go(tmp_path):
    database = connection.settings_dict
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import asyncio, os, sys, django; django.setup(); from core.leases import session_lease\n"
            "async def main():\n"
            "    async with session_lease('+15550000001', wait_seconds=0):\n"
            "        print('held', flush=True); await asyncio.sleep(60)\n"
            "asyncio.run(main())",
        ],
        env={
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "config.settings.test",
            "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
        },
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "held"

    async def try_now():
        async with session_lease("+15550000001", wait_seconds=0):
            pass

    with pytest.raises(SessionBusy):
        asyncio.run(try_now())
    holder.kill()
    holder.wait()

    async def wait_for_it():
        async with session_lease("+15550000001", wait_seconds=5):
            return "taken"

    assert asyncio.run(wait_for_it()) == "taken"


def _holder_row(name: str):
    with connection.cursor() as cursor:
        cursor.execute("SELECT worker_id, now() - beat_at FROM core_sessionholder WHERE name = %s", [name])
        return cursor.fetchone()


def _holder_write(name: str, holder: str, *, quiet_seconds: float) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO core_sessionholder (name, worker_id, token, beat_at)"
            " VALUES (%s, %s, 'left', now() - make_interval(secs => %s))",
            [name, holder, quiet_seconds],
        )


@pytest.mark.django_db(transaction=True)
def test_a_holder_whose_lock_went_with_a_restart_keeps_the_session_until_it_lets_go():
    """A PostgreSQL restart frees the advisory lock under a holder still talking to Telegram: a second opener
    must not take the session then (Telegram would see it used from two places at once)."""

    async def main():
        async with session_lease("+15550000001", wait_seconds=0):
            (lease,) = [lock for lock in held_locks() if "+15550000001" in lock.what]
            await sync_to_async(_terminate)(lease.backend_pid)  # as a restart does: the lock goes, the holder lives
            with pytest.raises(SessionBusy, match="still in use by worker .* lost its database lock"):
                async with session_lease("+15550000001", wait_seconds=0.5):
                    pass
        async with session_lease("+15550000001", wait_seconds=0):  # it let go: free again
            return "taken"

    assert asyncio.run(main()) == "taken"
    assert _holder_row("+15550000001") is None


@pytest.mark.django_db(transaction=True)
def test_a_holder_whose_lock_went_with_a_restart_keeps_its_row_fresh_however_long_it_takes_to_let_go(settings):
    """On a loaded machine the holder may take longer than two beats to notice the lost lock and stop: its row
    must not go quiet meanwhile, or a second process would open the session beside it."""
    settings.WORK_HEARTBEAT_SECONDS = 1

    async def main():
        async with session_lease("+15550000001", wait_seconds=0):
            (lease,) = [lock for lock in held_locks() if "+15550000001" in lock.what]
            await sync_to_async(_terminate)(lease.backend_pid)
            await asyncio.sleep(4.5)  # more than two beats and one second: a quiet row would be taken by now
            _, age = await sync_to_async(_holder_row)("+15550000001")
            with pytest.raises(SessionBusy, match="still in use by worker"):
                async with session_lease("+15550000001", wait_seconds=0.5):
                    pass
            return age

    assert asyncio.run(main()) < timedelta(seconds=2.5), "still beaten after its lease's connection went"
    assert _holder_row("+15550000001") is None, "it let go when it ended"


def _terminate(pid: int) -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(%s)", [pid])


@pytest.mark.django_db(transaction=True)
def test_a_holder_surely_gone_is_taken_at_once_and_a_live_one_elsewhere_only_once_quiet(settings):
    settings.WORK_HEARTBEAT_SECONDS = 30
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    _holder_write("+15550000001", f"{socket.gethostname()}-{ended.stdout.strip()}-1", quiet_seconds=0)
    _holder_write("+15550000002", "another-host-4242-1", quiet_seconds=0)
    _holder_write("+15550000003", "another-host-4242-1", quiet_seconds=61)

    async def open_now(name: str):
        async with session_lease(name, wait_seconds=0):
            return (await sync_to_async(_holder_row)(name))[0]

    assert asyncio.run(open_now("+15550000001")) == worker_id(), "its process ended: taken at once"
    with pytest.raises(SessionBusy, match="still in use by worker another-host-4242-1"):
        asyncio.run(open_now("+15550000002"))
    assert asyncio.run(open_now("+15550000003")) == worker_id(), "quiet for two beats: taken"


@pytest.mark.django_db(transaction=True)
def test_a_held_session_beats_its_holder_row(settings):
    settings.WORK_HEARTBEAT_SECONDS = 1

    async def main():
        async with session_lease("+15550000001", wait_seconds=0):
            await asyncio.sleep(0.2)
            first = await sync_to_async(_holder_row)("+15550000001")
            await asyncio.sleep(2)
            return first, await sync_to_async(_holder_row)("+15550000001")

    (holder, first_age), (_, later_age) = asyncio.run(main())
    assert holder == worker_id()
    assert later_age < first_age + timedelta(seconds=1.5), "beaten while held"
