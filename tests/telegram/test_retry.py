import asyncio

import pytest

from telegram import retry
from telegram.errors import TransientError


def test_backoff_doubles_from_a_fifth_of_a_second_up_to_half_a_minute():
    assert [retry.backoff_seconds(n) for n in (1, 2, 3, 4)] == [0.2, 0.4, 0.8, 1.6]
    assert retry.backoff_seconds(20) == 30.0


def test_transient_retries_sleep_then_give_up(monkeypatch):
    slept = []

    async def sleep(seconds):
        slept.append(seconds)

    monkeypatch.setattr(retry.asyncio, "sleep", sleep)
    retries = retry.TransientRetries(2)
    error = TransientError("network")

    async def main():
        await retries.after(error)
        await retries.after(error)
        with pytest.raises(TransientError):
            await retries.after(error)

    asyncio.run(main())
    assert slept == [0.2, 0.4] and retries.attempts == 3
