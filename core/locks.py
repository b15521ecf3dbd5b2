"""PostgreSQL advisory locks with 64-bit keys from namespaced names.

Account locks and content-hash locks live in different namespaces, so their keys
never collide by construction of the name (and only by a 2**-64 chance of hash).
"""

import hashlib
import logging
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass

from asgiref.sync import sync_to_async
from django.db import DatabaseError, connections

logger = logging.getLogger(__name__)

ACCOUNT = "account"
CONTENT_HASH = "content-hash"
FANOUT_ACCOUNT = "fanout-account"  # one sending run (reminder run or package send) per account at a time
CATALOG_AUDIT = "catalog-audit"  # one audit of the destination at a time
PACKAGE_SEND = "package-send"  # one check-then-create of a send per target chat
NOTIFICATION = "notification"


def lock_key(namespace: str, name: str) -> int:
    digest = hashlib.blake2b(f"{namespace}\x00{name}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@dataclass(frozen=True)
class HeldLock:
    """A session-level advisory lock this process holds: which backend holds it, and what it guards."""

    key: int
    backend_pid: int
    what: str


# Every session lock (and lease) this process holds right now, so the run engine's heartbeat can check that
# none went with its connection (a database restart drops them all). Registered after taking, forgotten before
# releasing: a lock listed here is always held, unless it was lost.
_held: dict[int, HeldLock] = {}


def held_lock_register(*, key: int, backend_pid: int, what: str) -> None:
    _held[key] = HeldLock(key=key, backend_pid=backend_pid, what=what)


def held_lock_forget(*, key: int) -> None:
    _held.pop(key, None)


def held_locks() -> list[HeldLock]:
    return list(_held.values())


def _backend_pid(using: str) -> int:
    return connections[using].connection.info.backend_pid


def _register(namespace: str, name: str, using: str) -> None:
    held_lock_register(
        key=lock_key(namespace, name), backend_pid=_backend_pid(using), what=f"the {namespace} lock {name}"
    )


def _release(namespace: str, name: str, using: str) -> None:
    held_lock_forget(key=lock_key(namespace, name))
    try:
        advisory_unlock(namespace=namespace, name=name, using=using)
    except DatabaseError as exc:
        # Its connection is gone, and the lock with it: nothing left to release.
        logger.warning("The %s lock %s went with its database connection: %s", namespace, name, exc)


def _scalar(sql: str, key: int, using: str) -> bool:
    with connections[using].cursor() as cursor:
        cursor.execute(sql, [key])
        return bool(cursor.fetchone()[0])


def advisory_xact_lock_try(*, namespace: str, name: str, using: str = "default") -> bool:
    """Held until the surrounding transaction ends; must be called inside one."""
    if not connections[using].in_atomic_block:
        raise RuntimeError("advisory_xact_lock_try needs an open transaction (transaction.atomic).")
    return _scalar("SELECT pg_try_advisory_xact_lock(%s)", lock_key(namespace, name), using)


def advisory_xact_lock(*, namespace: str, name: str, using: str = "default") -> None:
    """Waits for the lock, then holds it until the surrounding transaction ends."""
    if not connections[using].in_atomic_block:
        raise RuntimeError("advisory_xact_lock needs an open transaction (transaction.atomic).")
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [lock_key(namespace, name)])


def advisory_lock_try(*, namespace: str, name: str, using: str = "default") -> bool:
    """A session lock: held until released or until this connection closes."""
    return _scalar("SELECT pg_try_advisory_lock(%s)", lock_key(namespace, name), using)


def advisory_unlock(*, namespace: str, name: str, using: str = "default") -> bool:
    return _scalar("SELECT pg_advisory_unlock(%s)", lock_key(namespace, name), using)


@contextmanager
def advisory_lock(*, namespace: str, name: str, using: str = "default"):
    """Yields whether the lock was taken; releases it on exit.

    The section must keep this thread's connection open: nothing inside may call
    close_old_connections().
    """
    acquired = advisory_lock_try(namespace=namespace, name=name, using=using)
    if acquired:
        _register(namespace, name, using)
    try:
        yield acquired
    finally:
        if acquired:
            _release(namespace, name, using)


@asynccontextmanager
async def async_advisory_lock(*, namespace: str, name: str, using: str = "default"):
    """The same lock from the event loop: the ORM thread keeps the connection."""
    acquired = await sync_to_async(advisory_lock_try, thread_sensitive=True)(
        namespace=namespace, name=name, using=using
    )
    if acquired:
        await sync_to_async(_register, thread_sensitive=True)(namespace, name, using)
    try:
        yield acquired
    finally:
        if acquired:
            await sync_to_async(_release, thread_sensitive=True)(namespace, name, using)


def held_lock_count(*, using: str = "default") -> int:
    """Advisory locks this connection holds (for checks and tests)."""
    with connections[using].cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()")
        return cursor.fetchone()[0]
