"""Session leases: at most one process talks to Telegram as a given account at any moment.

Telegram kills a session used from two places at once (AUTH_KEY_DUPLICATED), so opening an account's
client takes its lease first, whatever the work (ingestion, uploads as a writer, fan-out, login,
refreshing chats, recovery checks). A lease is a PostgreSQL advisory lock held by a connection of its
own for as long as the client is open: a process that dies drops its connection, and with it the lease.
A second opener waits a bounded time, then gives up with `SessionBusy`; while it waits, the holder can
see that someone wants the account (`SessionLease.wanted`) and hand it over at a safe point.
"""

from contextlib import asynccontextmanager

import psycopg
from django.db import connections

from core.locks import held_lock_forget, held_lock_register, lock_key

SESSION = "telegram-session"


class SessionBusy(Exception):
    """Another process holds this account's Telegram session; try again later."""


class SessionLease:
    def __init__(self, connection: psycopg.AsyncConnection, key: int):
        self._connection = connection
        self._key = key

    async def wanted(self) -> bool:
        """Whether another process is waiting for this lease right now."""
        # An advisory lock on a bigint key shows in pg_locks as classid (high 32 bits) and objid (low 32 bits).
        unsigned = self._key & 0xFFFFFFFFFFFFFFFF
        cursor = await self._connection.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND classid = %s AND objid = %s AND objsubid = 1)",
            [unsigned >> 32, unsigned & 0xFFFFFFFF],
        )
        return bool((await cursor.fetchone())[0])


def connection_params() -> dict:
    """The default database's connection settings, for a psycopg connection of its own."""
    params = connections["default"].get_connection_params()
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.pop("prepare_threshold", None)
    return params


@asynccontextmanager
async def session_lease(name: str, *, wait_seconds: float):
    """Hold the lease of session `name` (an account's phone) inside the block; SessionBusy after waiting
    `wait_seconds` for it."""
    key = lock_key(SESSION, name)
    connection = await psycopg.AsyncConnection.connect(**connection_params(), autocommit=True)
    try:
        if wait_seconds <= 0:
            cursor = await connection.execute("SELECT pg_try_advisory_lock(%s)", [key])
            if not (await cursor.fetchone())[0]:
                raise SessionBusy(f"Telegram session {name} is in use by another process.")
        else:
            # Waiting in pg_advisory_lock (not polling) is what lets the holder see a waiter in pg_locks.
            await connection.execute(f"SET lock_timeout = {max(1, round(wait_seconds * 1000))}")
            try:
                await connection.execute("SELECT pg_advisory_lock(%s)", [key])
            except psycopg.errors.LockNotAvailable:
                raise SessionBusy(
                    f"Telegram session {name} stayed in use by another process for {wait_seconds:g} s."
                ) from None
        held_lock_register(key=key, backend_pid=connection.info.backend_pid, what=f"the session lease of {name}")
        yield SessionLease(connection, key)
    finally:
        held_lock_forget(key=key)
        await connection.close()  # the lock goes with the connection
