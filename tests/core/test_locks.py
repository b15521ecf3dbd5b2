import asyncio
import threading

import pytest
from django.db import connection, transaction

from core.locks import (
    ACCOUNT,
    CONTENT_HASH,
    advisory_lock,
    advisory_xact_lock_try,
    async_advisory_lock,
    held_lock_count,
    lock_key,
)

pytestmark = pytest.mark.django_db(transaction=True)


def _try_from_another_connection(namespace: str, name: str) -> bool:
    """Another thread has its own database connection, like another worker."""
    outcome = {}

    def attempt():
        with advisory_lock(namespace=namespace, name=name) as acquired:
            outcome["acquired"] = acquired
        connection.close()

    thread = threading.Thread(target=attempt)
    thread.start()
    thread.join()
    return outcome["acquired"]


def test_keys_are_64_bit_and_namespaced():
    key = lock_key(ACCOUNT, "+15550000001")
    assert -(2**63) <= key < 2**63
    assert key == lock_key(ACCOUNT, "+15550000001")
    assert key != lock_key(CONTENT_HASH, "+15550000001")


def test_a_held_lock_excludes_other_connections_until_released():
    with advisory_lock(namespace=ACCOUNT, name="a") as acquired:
        assert acquired
        assert not _try_from_another_connection(ACCOUNT, "a")
        assert _try_from_another_connection(CONTENT_HASH, "a"), "namespaces must not collide"
    assert _try_from_another_connection(ACCOUNT, "a")
    assert held_lock_count() == 0


def test_transaction_lock_ends_with_the_transaction():
    with transaction.atomic():
        assert advisory_xact_lock_try(namespace=CONTENT_HASH, name="abc")
        assert not _try_from_another_connection(CONTENT_HASH, "abc")
    assert _try_from_another_connection(CONTENT_HASH, "abc")


def test_transaction_lock_needs_a_transaction():
    with pytest.raises(RuntimeError):
        advisory_xact_lock_try(namespace=CONTENT_HASH, name="abc")


def test_async_lock_from_the_event_loop():
    async def hold():
        async with async_advisory_lock(namespace=ACCOUNT, name="b") as acquired:
            return acquired, _try_from_another_connection(ACCOUNT, "b")

    acquired, other = asyncio.run(hold())
    assert acquired and not other
    assert _try_from_another_connection(ACCOUNT, "b")
