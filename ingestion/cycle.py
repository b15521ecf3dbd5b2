"""What the stages of an ingestion cycle share: the context each is given, its records and its two ways to stop.

The stages are objects, each given the cycle's `CycleContext` (never the cycle itself): scan a channel
(`scan_stage.py`), take one archive set (`taking.py`), fetch (`fetching.py`), upload (`uploading.py`), the
posted photo as a preview (`previewing.py`); record and index are services of `ingestion` and `packages`. They
run inside one async cycle (`pipeline.py`); every database step is a synchronous service or selector called
through `core.db_thread.in_db_thread`, so the ORM never runs on the event loop and keeps the task thread's connection.
"""

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from django.conf import settings

from accounts.models import TelegramAccount
from ingestion.models import AccountChannelMap, IngestionRun, TopicProgress
from packages.models import Package
from telegram.errors import FloodWait
from telegram.gateway import TelegramGateway
from telegram.records import ChatRef


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


class AccountRefused(Exception):
    """Telegram refused an account of the cycle other than its reader (the destination's writer): the refusal
    is that account's (accounts.sessions.account_refusal_record), not the reader's."""

    def __init__(self, account: TelegramAccount, error: Exception):
        super().__init__(f"{account}: {error}")
        self.account, self.error = account, error


class SetFailed(Exception):
    """This archive set is not taken now: it becomes a skipped package with `reason`."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass
class CycleContext:
    """What one account's cycle gives its stages: its run and progress, and the cycle's ways to talk to
    Telegram. What the stages learn for the cycle to act on after (`waiting_until`, `more_left`) is noted here."""

    run: IngestionRun
    account: TelegramAccount
    progress: "Progress"
    staging: Path  # this run's own folder
    started: datetime  # on the clock packages' created_at are written with (timezone.now)
    # Note progress (written every so often); stops here if the run was paused or canceled.
    report: Callable[..., Awaitable[None]]
    # One Telegram request: short FloodWaits slept through, network trouble retried (the cycle's policy).
    call: Callable[[Callable[[], Awaitable[Any]]], Awaitable[Any]]
    # An account's gateway, opened once a cycle (the reader's, or the destination writer's).
    gateway: Callable[[TelegramAccount], Awaitable[TelegramGateway]]
    # Between two sets: lend the cycle's sessions to whoever waits for them, stop if an account started resting.
    at_set_boundary: Callable[[], Awaitable[None]]
    # Whether another process waits for a session this cycle holds (nothing then starts downloading early).
    wanted_elsewhere: Callable[[], Awaitable[bool]]
    waiting_until: float | None = None  # when the earliest set waiting for volumes settles
    more_left: bool = False  # a channel's share ran out with sets left: the next cycle comes at once


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
    stopped: bool = False  # the topic's fetch was turned off mid-run, or the channel's turn is over
    turn_over: bool = False  # the channel took its share of the cycle; the rest waits for the next one


class OutcomeKind(StrEnum):
    """What became of one archive set in a cycle."""

    INGESTED = "ingested"
    DUPLICATE = "duplicate"  # content already in the catalog
    SKIPPED = "skipped"  # recorded as a skipped package, with its reason
    PENDING = "pending"  # its volumes are not all there yet: a later cycle takes it


@dataclass
class Outcome:
    kind: OutcomeKind
    package: Package | None = None
    holds_watermark: bool = False


# A run's counters and the ChannelScan field each one's per-channel share goes to.
SCAN_COUNTERS = {
    "messages_scanned": "messages",
    "archives_found": "found",
    "ingested": "ingested",
    "duplicates": "duplicates",
    "skipped": "skipped",
    "filtered": "filtered",
}


@dataclass
class ScanLog:
    """One channel's part of a cycle, from the run's counters before and after: written as a ChannelScan."""

    action: str
    reason: str
    requests_before: int
    counters_before: dict[str, int]
    started: float = field(default_factory=time.monotonic)

    def note(self, action: str, reason: str) -> None:
        self.action, self.reason = action, reason

    def shares(self, run: IngestionRun) -> dict[str, int]:
        return {column: getattr(run, name) - self.counters_before[name] for name, column in SCAN_COUNTERS.items()}


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
