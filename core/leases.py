"""Session leases: at most one process talks to Telegram as a given account at any moment.

Telegram kills a session used from two places at once (AUTH_KEY_DUPLICATED), so opening an account's
client takes its lease first, whatever the work (ingestion, uploads as a writer, fan-out, login,
refreshing chats, recovery checks). A lease is a PostgreSQL advisory lock held by a connection of its
own for as long as the client is open: a process that dies drops its connection, and with it the lease.
A second opener waits a bounded time, then gives up with `SessionBusy`; while it waits, the holder can
see that someone wants the account (`SessionLease.wanted`) and hand it over at a safe point.

A PostgreSQL restart frees every advisory lock while their holders still talk to Telegram (a run engine's
heartbeat stops its work within a period). So the lease also writes who holds it (`SessionHolder`, kept by
the restart) and beats it every WORK_HEARTBEAT_SECONDS: a new opener takes the session only once that holder
let go or is surely gone, the same rule as taking over a run.
"""

import asyncio
import contextlib
import secrets
from contextlib import asynccontextmanager

import psycopg
from django.conf import settings
from django.db import connections

from core.locks import held_lock_forget, held_lock_register, lock_key
from core.workers import worker_gone, worker_id

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


# The tokens of the leases this process holds right now: a row of this process with another token was left by
# a lease whose database went away before it could delete it.
_live_tokens: set[str] = set()

_HOLDER = "SELECT worker_id, token, beat_at < now() - make_interval(secs => %s) FROM core_sessionholder WHERE name = %s"
_HOLDER_TAKE = """
INSERT INTO core_sessionholder (name, worker_id, token, beat_at) VALUES (%(name)s, %(worker)s, %(token)s, now())
ON CONFLICT (name) DO UPDATE SET worker_id = EXCLUDED.worker_id, token = EXCLUDED.token, beat_at = now()
WHERE core_sessionholder.token = %(old)s
"""


async def _holder_take(connection: psycopg.AsyncConnection, name: str, token: str) -> str:
    """Write this lease as the session's holder: "" once written, else the worker still holding it."""
    quiet_after = 2 * settings.WORK_HEARTBEAT_SECONDS + 1
    row = await (await connection.execute(_HOLDER, [quiet_after, name])).fetchone()
    old = ""
    if row is not None:
        holder, old, quiet = row
        ours_left = holder == worker_id() and old not in _live_tokens
        if not (quiet or ours_left or worker_gone(holder)):
            return holder
    taken = await connection.execute(_HOLDER_TAKE, {"name": name, "worker": worker_id(), "token": token, "old": old})
    return "" if taken.rowcount else "another process"


async def _holder_beat(connection: psycopg.AsyncConnection, name: str, token: str) -> None:
    """Keep the holder row fresh while the lease is held. Once the lease's connection went with a restart, beat
    through a new one: the holder still talks to Telegram until its heartbeat stops it and it lets go, however
    long a loaded machine takes to get there, and a quiet row would hand the session to a second process."""
    beat = "UPDATE core_sessionholder SET beat_at = now() WHERE name = %s AND token = %s"
    current = connection
    try:
        while True:
            await asyncio.sleep(settings.WORK_HEARTBEAT_SECONDS)
            try:
                if current.closed:
                    params = {**connection_params(), "connect_timeout": 2}
                    current = await psycopg.AsyncConnection.connect(**params, autocommit=True)
                await current.execute(beat, [name, token])
            except psycopg.Error:
                pass  # the database is not back yet: the next beat tries again
    finally:
        if current is not connection:
            await current.close()


async def _holder_let_go(connection: psycopg.AsyncConnection, name: str, token: str) -> None:
    """Delete the holder row; through new connections when the lease's went with a restart, for up to a beat
    while the database comes back (after that the row goes quiet, and is taken after two periods)."""
    delete = "DELETE FROM core_sessionholder WHERE name = %s AND token = %s"
    with contextlib.suppress(psycopg.Error):
        await connection.execute(delete, [name, token])
        return
    deadline = asyncio.get_running_loop().time() + settings.WORK_HEARTBEAT_SECONDS
    while True:
        try:
            params = {**connection_params(), "connect_timeout": 2}
            async with await psycopg.AsyncConnection.connect(**params, autocommit=True) as fresh:
                await fresh.execute(delete, [name, token])
            return
        except psycopg.Error:
            if asyncio.get_running_loop().time() >= deadline:
                return
            await asyncio.sleep(1)


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
    token = secrets.token_hex(8)
    connection = await psycopg.AsyncConnection.connect(**connection_params(), autocommit=True)
    beat = None
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
        await _holder_wait(connection, name, token, wait_seconds=wait_seconds)
        _live_tokens.add(token)
        beat = asyncio.create_task(_holder_beat(connection, name, token))
        held_lock_register(key=key, backend_pid=connection.info.backend_pid, what=f"the session lease of {name}")
        yield SessionLease(connection, key)
    finally:
        held_lock_forget(key=key)
        if beat is not None:
            beat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await beat
            _live_tokens.discard(token)
            await _holder_let_go(connection, name, token)
        await connection.close()  # the lock goes with the connection


async def _holder_wait(connection: psycopg.AsyncConnection, name: str, token: str, *, wait_seconds: float) -> None:
    """With the lock taken: wait (up to `wait_seconds`) for a holder the lock lost in a restart to let go."""
    deadline = asyncio.get_running_loop().time() + wait_seconds
    while holder := await _holder_take(connection, name, token):
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            raise SessionBusy(
                f"Telegram session {name} is still in use by worker {holder}, which lost its database lock "
                "(did PostgreSQL restart?) and stops at its next heartbeat."
            )
        await asyncio.sleep(min(1.0, left))
