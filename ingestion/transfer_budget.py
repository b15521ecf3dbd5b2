"""What every file part of an ingestion cycle asks before it goes: is it within the account's hours, and its
bytes out of the account's bandwidth cap (accounts.ingest_limits), shared with every other worker process.

The settings are read again every LIMITS_REFRESH_SECONDS, so an operator's change reaches a transfer in flight.
Outside the hours the part is not sent: the cycle stops there (IngestHoursClosed), what was downloaded stays for
the resume, and the rest waits for the hours to open.
"""

import time

from accounts import ingest_limits
from accounts.models import TelegramAccount
from core.db_thread import in_db_thread
from core.ratelimit import Pace
from ingestion.cycle import CycleInterrupted

LIMITS_REFRESH_SECONDS = 10


class IngestHoursClosed(CycleInterrupted):
    """The account's ingestion hours closed: the part in flight finished, nothing more is transferred."""


class TransferBudget:
    def __init__(self, *, account: TelegramAccount):
        self._account_id = account.pk
        self._use(account)

    def _use(self, account: TelegramAccount) -> None:
        self._account = account
        self._bucket = ingest_limits.account_transfer_bucket(account=account)
        self._loaded_at = time.monotonic()

    async def __call__(self, size: int) -> None:
        if time.monotonic() - self._loaded_at >= LIMITS_REFRESH_SECONDS:
            self._use(await in_db_thread(TelegramAccount.objects.get)(pk=self._account_id))
        wait = ingest_limits.account_ingest_wait(account=self._account)
        if wait:
            raise IngestHoursClosed(wait)
        if self._bucket is not None:
            await self._bucket.acquire(tokens=size, taken=self._taken)

    async def _taken(self, pace: Pace) -> None:
        # Every part's due time, not a sample of them: a bucket Redis forgets starts from the last one written, and
        # one left out would be a burst on top of the bytes already handed out.
        await in_db_thread(ingest_limits.account_transfer_spent)(account=self._account, pace=pace)
