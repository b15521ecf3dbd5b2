"""Session leases: one holder at a time, a bounded wait, a waiter the holder can see, gone with its process."""

import asyncio
import os
import subprocess
import sys
import time

import pytest
from django.db import connection

from core.leases import SessionBusy, session_lease

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
