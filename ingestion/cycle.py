"""What the stages of an ingestion cycle share: its records, its two ways to stop, and `db`.

The stages (scan in `pipeline.py`, fetch in `fetching.py`, upload in `uploading.py`, record and index in
`services.py`) run inside one async cycle; every database step is a synchronous service or selector called
through `db`, so the ORM never runs on the event loop and keeps the task thread's connection.
"""

import asyncio
import time
from dataclasses import dataclass, field

from asgiref.sync import sync_to_async
from django.conf import settings

from ingestion.models import AccountChannelMap, IngestionRun, TopicProgress
from packages.models import Package
from telegram.errors import FloodWait
from telegram.records import ChatRef


def db(function):
    return sync_to_async(function, thread_sensitive=True)


async def sleep_flood_wait(exc: FloodWait, *, account, doing: str) -> None:
    """A short FloodWait is slept through in place (then the same request again); a long one ends the cycle
    cleanly, and what is left waits for the next one."""
    if exc.seconds > settings.INGEST_FLOOD_SLEEP_MAX_SECONDS:
        raise CycleInterrupted(
            f"Telegram asked {account} to wait {exc.seconds} s {doing}; the rest waits for the next cycle."
        ) from exc
    await asyncio.sleep(exc.seconds)


class CycleInterrupted(Exception):
    """Stop this account's cycle cleanly; nothing unfinished is moved past."""


class SetFailed(Exception):
    """This archive set is not taken now: it becomes a skipped package with `reason`."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass
class ScanTarget:
    channel_map: AccountChannelMap
    ref: ChatRef
    topic: TopicProgress | None = None

    @property
    def holder(self) -> AccountChannelMap | TopicProgress:
        """Whose watermark this scan moves: the topic's in a forum, else the channel map's."""
        return self.topic if self.topic is not None else self.channel_map

    @property
    def label(self) -> str:
        return f"{self.channel_map.channel.title}" + (f" / {self.topic.title}" if self.topic else "")

    @property
    def topic_id(self) -> int | None:
        return self.topic.topic_id if self.topic else None


@dataclass
class ScanResult:
    found: int = 0
    failures: int = 0
    held: bool = False  # a retryable failure holds the watermark
    stopped: bool = False  # the topic's fetch was turned off mid-run


@dataclass
class Outcome:
    kind: str  # ingested, duplicate, skipped, pending
    package: Package | None = None
    holds_watermark: bool = False


@dataclass
class Progress:
    """Live activity, written to the run at most every INGEST_PROGRESS_EVERY_SECONDS."""

    run: IngestionRun
    written_at: float = 0.0
    dirty: set = field(default_factory=set)

    def set(self, **values) -> None:
        for name, value in values.items():
            setattr(self.run, name, value)
            self.dirty.add(name)

    def add(self, **increments) -> None:
        for name, value in increments.items():
            setattr(self.run, name, getattr(self.run, name) + value)
            self.dirty.add(name)

    def due(self) -> bool:
        return time.monotonic() - self.written_at >= settings.INGEST_PROGRESS_EVERY_SECONDS
