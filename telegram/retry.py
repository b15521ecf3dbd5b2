"""One retry policy for Telegram requests, shared by every caller (ingestion, fan-out).

Transient trouble (network, RPC_CALL_FAIL, a session briefly in use) is retried in place a bounded number of
times, with one backoff; FloodWaits are the caller's to honour (sleep, pause the account, or stop), since
only the caller knows what waiting costs it.
"""

import asyncio

from telegram.errors import TransientError

BACKOFF_FIRST_SECONDS = 0.2
BACKOFF_MAX_SECONDS = 30.0


def backoff_seconds(attempt: int) -> float:
    """Wait before retry number `attempt` (1, 2, …): doubling from 0.2 s, at most 30 s."""
    return min(BACKOFF_FIRST_SECONDS * 2 ** (attempt - 1), BACKOFF_MAX_SECONDS)


class TransientRetries:
    """Counts the transient failures of one piece of work: `await retries.after(exc)` sleeps the backoff,
    or re-raises once `limit` retries are spent."""

    def __init__(self, limit: int):
        self.limit = limit
        self.attempts = 0

    async def after(self, exc: TransientError) -> None:
        self.attempts += 1
        if self.attempts > self.limit:
            raise exc
        await asyncio.sleep(backoff_seconds(self.attempts))
