"""One account's ingestion cycle, in stages: scan → fetch → upload → record and index.

This module scans (what changed, which sets are whole, which are new) and drives each set through the
stages: fetching (`fetching.py`), uploading (`uploading.py`), recording and indexing (services of
`ingestion` and `packages`, no Telegram), the posted photo as its preview (`previewing.py`). The shared
records are in `cycle.py`.

Why this size: scanning and driving a set are one loop over the cycle's records; the stages are elsewhere.
"""

import asyncio
import errno
import logging
import math
import shutil
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from datetime import datetime
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import timezone

from accounts.ingest_limits import account_ingest_wait
from accounts.models import TelegramAccount
from accounts.services import account_mark_unusable
from core import clock, locks
from core.crypto import unseal
from core.db_thread import in_db_thread
from core.engine import OUTAGES, RunEngine, WorkInterrupted, WorkLost, WorkStopped
from core.formatting import format_duration
from core.models import RunStatus
from core.runs import run_finish
from core.storage import storage_describe, storage_outage
from ingestion import edits, notifications, scanning, selectors
from ingestion import services as ingestion_services
from ingestion.cycle import (
    SCAN_COUNTERS,
    CycleInterrupted,
    Outcome,
    OutcomeKind,
    Progress,
    ScanLog,
    ScanResult,
    ScanTarget,
    SetFailed,
    sleep_flood_wait,
)
from ingestion.fetching import FetchStage, content_hash_of
from ingestion.models import ANOTHER_RUN_WORKING, PENDING_REASONS, AccountChannelMap, IngestionRun, SkipReason
from ingestion.previewing import PreviewStage
from ingestion.rules import Rules
from ingestion.selectors import Writer
from ingestion.transfer_budget import TransferBudget
from ingestion.uploading import UploadStage
from packages import selectors as package_selectors
from packages import services as package_services
from packages.completeness import SetVerdict
from packages.detection import ArchiveSet, group_sets, same_family, set_may_grow
from packages.models import MetadataStatus, Package
from packages.raw_objects import RawObjectUnreadable
from telegram.errors import (
    AccountRestricted,
    AuthRequired,
    FloodWait,
    NotFound,
    SessionInUse,
    TargetForbidden,
    TransientError,
)
from telegram.gateway import TelegramGateway, open_gateway
from telegram.records import GENERAL_TOPIC_ID, LAST_MESSAGE_BATCH, TOPICS_PAGE, ChatRef, DocumentMessage
from telegram.retry import TransientRetries

logger = logging.getLogger(__name__)


class IngestionCycle(RunEngine, FetchStage, UploadStage, PreviewStage):
    def __init__(self, *, run: IngestionRun, on_progress: Callable[[IngestionRun], None] | None = None):
        super().__init__(run=run)
        self.account = run.account
        self.progress = Progress(run=run)
        self.on_progress = on_progress
        self.staging = Path(settings.INGEST_STAGING_DIR) / f"run-{run.pk}"
        self.gateways: dict[int, TelegramGateway] = {}
        self.waiting_until: float | None = None  # when the earliest set waiting for volumes settles
        self.set_verdicts: dict[tuple[int, ...], SetVerdict] = {}  # what a set's bytes said, by its documents
        self.prefetching: dict[int, asyncio.Task] = {}  # sets downloading while the set before them uploads
        self.up_next: tuple[TelegramGateway, ScanTarget, ArchiveSet] | None = None  # what may download early
        # Photos of each chat read for previews this cycle, and since when the scan wants them.
        self.photos: dict[int, list[DocumentMessage]] = {}
        self.photos_since: dict[int, datetime] = {}
        self.photo_window = settings.PACKAGE_PREVIEW_PHOTO_WINDOW_SECONDS
        self.whole_downloads: dict[Path, Path] = {}  # staged volume → where its download is kept past the run
        self.interrupted = False  # stopped undecided (an outage, a lost lock): whole downloads are kept
        self.turns: dict[int, int] = {}  # sets each channel map uploaded this cycle (its share: Channel.share)
        self.more_left = False  # a channel's share ran out with sets left: the next cycle comes at once
        self.started = clock.now()

    # Entry point (sync) -----------------------------------------------------------------------------------
    def execute(self) -> str:
        """Run the cycle under the account's lock; returns the run's ending status."""
        with locks.advisory_lock(namespace=locks.ACCOUNT, name=str(self.account.pk)) as acquired:
            if not acquired:
                self._finish(RunStatus.FAILED, ANOTHER_RUN_WORKING)
                return RunStatus.FAILED
            try:
                status, error = self.drive(self._cycle)
            except WorkLost as lost:
                # Its lock or claim went (a database restart): nothing more goes to Telegram from here; the run
                # is queued again at once, and what was decided stays decided.
                self.interrupted = True
                self.hand_back(lost)
                return RunStatus.QUEUED
            except WorkStopped as stopped:
                logger.info("Ingestion run %s: %s", self.run.pk, stopped)
                return RunStatus.QUEUED
            except (AuthRequired, AccountRestricted) as exc:
                account_mark_unusable(account=self.account, error=exc)
                notifications.notify_account_unusable(account=self.account)
                status, error = RunStatus.FAILED, f"{self.account}: {exc}"
            except Exception as exc:
                logger.exception("Ingestion run %s failed", self.run.pk)
                status, error = RunStatus.FAILED, f"{exc.__class__.__name__}: {exc}"
            finally:
                if self.interrupted:
                    self._downloads_keep()
                shutil.rmtree(self.staging, ignore_errors=True)
            self._flush(force=True)
            self._finish(status, error)
            self._come_back_for_waiting_sets()
            self._come_back_for_the_rest()
            return status

    def _come_back_for_the_rest(self) -> None:
        """A channel whose share of this cycle ran out (a backfill) goes on in the next cycle, queued at once, so
        every other channel has had its turn in between."""
        if not self.more_left:
            return
        try:
            ingestion_services.ingestion_run_request(
                account=self.account,
                trigger="schedule",
                countdown=settings.INGEST_CONTINUE_SECONDS,
                channel=self.run.channel,
            )
        except ValidationError as exc:  # resting, switched off or logged out meanwhile: the schedule takes over
            logger.info("%s: the rest waits for the schedule (%s)", self.account, " ".join(exc.messages))

    def _come_back_for_waiting_sets(self) -> None:
        """A set waiting for its volumes is looked at again once it settles, not only at the next cycle."""
        if self.waiting_until is None:
            return
        countdown = max(1, math.ceil(self.waiting_until - time.time()))
        if countdown < settings.INGEST_INTERVAL_MINUTES * 60:
            ingestion_services.ingestion_run_request(account=self.account, trigger="schedule", countdown=countdown)

    def _finish(self, status: str, error: str) -> None:
        fields = {name: getattr(self.run, name) for name in self.progress.dirty}
        fields.update(requests_sent=self._requests_sent())
        fields.update(current_step="", current_file="", current_bytes_done=0, current_bytes_total=0)
        run_finish(run=self.run, status=status, error=error, **fields)

    def _flush(self, *, force: bool = False) -> None:
        if not self.progress.dirty or (not force and not self.progress.due()):
            return
        names = sorted(self.progress.dirty)
        IngestionRun.objects.filter(pk=self.run.pk).update(**{name: getattr(self.run, name) for name in names})
        self.progress.dirty.clear()
        self.progress.written_at = time.monotonic()
        self.progressed()

    async def progress_report(self, **values) -> None:
        """Stop here if the run was paused or canceled; else note the progress, written every so often."""
        self.check()
        self.progress.set(**values)
        if self.progress.due():
            await in_db_thread(self._flush)()
        if self.on_progress is not None:
            self.on_progress(self.run)

    # The cycle ----------------------------------------------------------------------------------------------
    async def _cycle(self) -> tuple[str, str]:
        wait = account_ingest_wait(account=self.account)
        if wait:
            return RunStatus.PARTIAL, wait
        maps = await in_db_thread(selectors.reader_targets)(account=self.account, channel_id=self.run.channel_id)
        writer = await in_db_thread(selectors.destination_writer)(reader=self.account)
        cycle = await in_db_thread(scanning.cycle_number)(run=self.run)
        plan = await in_db_thread(scanning.scan_plan)(
            maps=[channel_map for channel_map, _ in maps], cycle=cycle, asked=self.run.channel_id is not None
        )
        problems = []
        try:
            reader = await self._gateway(self.account)
            # Scanned channels are asked too (same request): their last id is what the scan reaches.
            wanted = [ref for channel_map, ref in maps if plan[channel_map.pk].action != scanning.SKIP]
            last_ids = await self._last_message_ids(reader, wanted)
            for channel_map, ref in maps:
                async with self._scan_log(channel_map, plan[channel_map.pk]) as log:
                    action = log.action
                    if action == scanning.SKIP:
                        continue
                    last_id = last_ids.get(ref.id)
                    nothing_new = last_id is not None and last_id <= channel_map.scanned_through_message_id
                    idle = action == scanning.CHECK and nothing_new
                    if idle:
                        log.note(scanning.CHECK, f"{log.reason}: nothing new since the last scan")
                        await in_db_thread(scanning.scan_record_idle)(channel_map=channel_map)
                    elif action == scanning.CHECK:
                        log.note(scanning.SCAN, f"{log.reason}: " + ("new messages" if last_id else "it failed"))
                    try:
                        if not idle:
                            await self._scan_channel(reader, channel_map, ref, writer, last_id)
                        await self._take_edited(reader, channel_map, ref, writer)
                        if channel_map.channel.last_error and not idle:
                            await in_db_thread(ingestion_services.channel_error_clear)(channel=channel_map.channel)
                    except (TargetForbidden, NotFound, TransientError) as exc:
                        # One unreachable channel does not stop the others; it is retried next cycle.
                        await in_db_thread(self._channel_unreachable)(channel_map, str(exc))
                        problems.append(f"{channel_map.channel.title}: {exc}")
                        log.note(scanning.FAILED, str(exc))
                    except (CycleInterrupted, AuthRequired, AccountRestricted, WorkInterrupted, *OUTAGES) as exc:
                        log.note(scanning.FAILED, str(exc))
                        raise
                    except Exception as exc:
                        logger.exception("Unexpected error while scanning %s", channel_map.channel.title)
                        error = f"Unexpected error: {exc.__class__.__name__}: {exc}"
                        await in_db_thread(self._channel_unreachable)(channel_map, error)
                        problems.append(f"{channel_map.channel.title}: {error}")
                        log.note(scanning.FAILED, error)
        except CycleInterrupted as exc:
            self.interrupted = True
            problems.append(str(exc))
        finally:
            await self._prefetch_drop()
            for gateway in self.gateways.values():
                await gateway.__aexit__(None, None, None)
        if problems:
            return RunStatus.PARTIAL, " ".join(problems)
        if self.run.skipped:
            return RunStatus.PARTIAL, f"{self.run.skipped} set(s) skipped; see Skipped packages."
        return RunStatus.SUCCESS, ""

    def _requests_sent(self) -> int:
        return sum(gateway.requests_sent for gateway in self.gateways.values())

    @asynccontextmanager
    async def _scan_log(self, channel_map: AccountChannelMap, decision: scanning.Decision):
        """What this cycle did with one channel and why, kept as its scan history (a ChannelScan)."""
        counters = {name: getattr(self.run, name) for name in SCAN_COUNTERS}
        log = ScanLog(decision.action, decision.reason, self._requests_sent(), counters)
        try:
            yield log
        finally:
            await in_db_thread(scanning.channel_scan_write)(
                run=self.run,
                channel_map=channel_map,
                action=log.action,
                reason=log.reason,
                requests=self._requests_sent() - log.requests_before,
                seconds=time.monotonic() - log.started,
                **log.shares(self.run),
            )

    def _resting(self) -> list[str]:
        """The accounts of this cycle that started resting (accounts.pace): nothing more goes through them."""
        resting = TelegramAccount.objects.filter(pk__in=list(self.gateways), resting_until__gt=timezone.now())
        return [f"{account} ({account.rest_reason})" for account in resting]

    async def _hand_over_sessions(self) -> None:
        """At a set boundary, lend the sessions this cycle holds to a process waiting for them (a reminder
        run, another account's cycle uploading through this writer), then take them back. Not while the next set
        downloads in the background: none is started once someone waits, so the next boundary is free. A cycle
        whose account started resting stops here; it goes on after the rest."""
        resting = await in_db_thread(self._resting)()
        if resting:
            raise CycleInterrupted(f"Stopped: {', '.join(resting)} is resting; the cycle goes on after the rest.")
        if self.prefetching:
            return
        for gateway in self.gateways.values():
            try:
                if await gateway.hand_over_if_wanted(wait_seconds=settings.INGEST_SESSION_HANDOVER_WAIT_SECONDS):
                    logger.info("Handed the session of %s over at a set boundary, and took it back", gateway.phone)
            except SessionInUse as exc:
                raise CycleInterrupted(f"{gateway.phone} is busy elsewhere (sending reminders?): {exc}") from exc

    async def _last_message_ids(self, reader: TelegramGateway, refs: list[ChatRef]) -> dict[int, int]:
        """One request per LAST_MESSAGE_BATCH chats; a failed batch leaves its chats to a full scan."""
        last_ids = {}
        for start in range(0, len(refs), LAST_MESSAGE_BATCH):
            batch = refs[start : start + LAST_MESSAGE_BATCH]
            try:
                last_ids.update(await self._call(lambda batch=batch: reader.get_last_message_ids(batch)))
            except (TargetForbidden, NotFound, TransientError) as exc:
                logger.warning("Last-message check failed for %d chats, scanning them instead: %s", len(batch), exc)
        return last_ids

    async def _gateway(self, account: TelegramAccount) -> TelegramGateway:
        if account.pk not in self.gateways:
            gateway = open_gateway(
                phone=account.phone,
                session=unseal(account.session_sealed),
                transfer_budget=TransferBudget(account=account),
            )
            try:
                await gateway.__aenter__()
            except SessionInUse as exc:
                if account.pk == self.account.pk:
                    raise CycleInterrupted(f"{account} is busy in another process: {exc}") from exc
                raise SetFailed(SkipReason.UPLOAD_FAILED, f"The writer {account} is busy: {exc}") from exc
            self.gateways[account.pk] = gateway
        return self.gateways[account.pk]

    def _channel_unreachable(self, channel_map: AccountChannelMap, error: str) -> None:
        ingestion_services.channel_error_record(channel=channel_map.channel, account=self.account, error=error)
        notifications.notify_channel_unreachable(channel=channel_map.channel, account=self.account, error=error)

    async def _duplicate(self, package: Package, channel, items: list[DocumentMessage]) -> None:
        self.progress.add(duplicates=1)
        await in_db_thread(ingestion_services.archive_set_record_duplicate)(
            package=package, channel=channel, items=items
        )

    async def _learn_topics(self, reader: TelegramGateway, channel_map: AccountChannelMap, ref: ChatRef):
        """List the forum's topics (TOPICS_PAGE a page): only to learn new topics and their titles."""
        topics = []
        offset = 0
        while True:
            page = await self._call(lambda offset=offset: reader.list_topics(ref, offset_topic_id=offset))
            topics.extend(page)
            if len(page) < TOPICS_PAGE:
                break
            offset = page[-1].id
        return await in_db_thread(ingestion_services.topics_sync)(channel_map=channel_map, topics=topics)

    async def _call(self, make_call):
        """One Telegram request: short FloodWaits are slept through, then the same request again."""
        retries = TransientRetries(settings.INGEST_TRANSIENT_RETRIES)
        while True:
            self.check()
            try:
                return await make_call()
            except FloodWait as exc:
                await sleep_flood_wait(exc, account=self.account, doing="while scanning")
            except TransientError as exc:
                await retries.after(exc)

    # Scanning -----------------------------------------------------------------------------------------------
    async def _scan_channel(
        self, reader: TelegramGateway, channel_map: AccountChannelMap, ref: ChatRef, writer, last_id: int | None
    ) -> None:
        await self.progress_report(current_channel=channel_map.channel.title, current_topic="")
        if not channel_map.channel.chat.is_forum:
            floor_id, since = channel_map.channel.start_floor
            watermark = max(channel_map.last_processed_message_id, floor_id)
            messages = await self._history(reader, ref, min_id=watermark, min_date=since)
            self._photos_wanted_since(ref, messages)
            through = max([last_id or 0, channel_map.scanned_through_message_id, *(m.id for m in messages)])
            result = await self._process_messages(reader, ScanTarget(channel_map, ref), messages, writer, through)
            if result.turn_over:
                # Not idle, and not scanned through: the next cycle goes on from the watermark.
                await in_db_thread(scanning.scan_record)(
                    holder=channel_map, found_archives=result.found, failures=result.failures, retry_left=True
                )
            elif not result.stopped:
                await in_db_thread(scanning.scan_record)(
                    holder=channel_map,
                    found_archives=result.found,
                    failures=result.failures,
                    scanned_through=through,
                    retry_left=result.held,
                )
            return
        await self._scan_forum(reader, channel_map, ref, writer, last_id)

    async def _scan_forum(self, reader, channel_map: AccountChannelMap, ref: ChatRef, writer, last_id) -> None:
        """One channel-wide scan from the lowest enabled topic watermark; each message goes to its topic."""
        topics = await in_db_thread(selectors.map_topics)(channel_map=channel_map)
        if not topics:
            topics = await self._learn_topics(reader, channel_map, ref)
        enabled = [topic for topic in topics if topic.fetch_enabled]
        if not enabled:
            return
        floor_id, since = channel_map.channel.start_floor
        watermark = max(floor_id, min(t.last_processed_message_id for t in enabled))
        messages = await self._history(reader, ref, min_id=watermark, min_date=since)
        self._photos_wanted_since(ref, messages)
        known = {topic.topic_id for topic in topics}
        if any((message.topic_id or GENERAL_TOPIC_ID) not in known for message in messages):
            topics = await self._learn_topics(reader, channel_map, ref)
            enabled = [topic for topic in topics if topic.fetch_enabled]
        by_topic: dict[int, list[DocumentMessage]] = {}
        for message in messages:
            by_topic.setdefault(message.topic_id or GENERAL_TOPIC_ID, []).append(message)
        through = max([last_id or 0, channel_map.scanned_through_message_id, *(m.id for m in messages)])
        found = failures = 0
        held, complete = False, True
        # General last: a file first seen in a named topic keeps that topic as its context.
        for topic in sorted(enabled, key=lambda topic: (topic.topic_id == GENERAL_TOPIC_ID, topic.topic_id)):
            await self.progress_report(current_topic=topic.title)
            mine = [m for m in by_topic.get(topic.topic_id, []) if m.id > topic.last_processed_message_id]
            result = await self._process_messages(reader, ScanTarget(channel_map, ref, topic), mine, writer, through)
            if result.stopped:
                complete, held = False, held or result.turn_over
                continue
            await in_db_thread(scanning.scan_record)(
                holder=topic, found_archives=result.found, failures=result.failures, retry_left=result.held
            )
            found, failures, held = found + result.found, failures + result.failures, held or result.held
        await in_db_thread(scanning.scan_record)(
            holder=channel_map,
            found_archives=found,
            failures=failures,
            scanned_through=through if complete else channel_map.scanned_through_message_id,
            retry_left=held,
        )

    async def _take_edited(self, reader, channel_map: AccountChannelMap, ref: ChatRef, writer) -> None:
        """Posts below the watermark whose file an edit replaced are taken again, as new content (ingestion.edits);
        the watermarks stay where they are."""
        if not channel_map.channel.chat.is_forum:
            targets = [ScanTarget(channel_map, ref)]
        else:
            topics = await in_db_thread(selectors.map_topics)(channel_map=channel_map)
            targets = [ScanTarget(channel_map, ref, topic) for topic in topics if topic.fetch_enabled]
        if not targets:
            return
        through = max(target.holder.last_processed_message_id for target in targets)
        edited = await edits.edited_posts(
            reader,
            ref,
            chat_id=channel_map.channel.chat_id,
            through=through,
            cycle_started=self.started,
            call=self._call,
        )
        for target in targets:
            watermark = target.holder.last_processed_message_id
            mine = [
                message
                for message in edited
                if message.id <= watermark
                and (target.topic is None or (message.topic_id or GENERAL_TOPIC_ID) == target.topic_id)
            ]
            if mine:
                logger.info("%s: %d post(s) edited to hold another file, taken again", target.label, len(mine))
                await self._process_messages(reader, target, mine, writer, watermark)

    def _sets_taken(self, target: ScanTarget, sets: list[ArchiveSet]) -> list[ArchiveSet]:
        """The sets the channel's rules take; the others are counted as filtered, never skipped: they hold no
        watermark and are not tried again (docs/operations.md, "What each channel takes")."""
        rules = Rules.of(target.channel_map.channel)
        if not rules.filters:
            return sets
        taken = []
        for archive_set in sets:
            sizes = [item.document.size for item in archive_set.items]
            may_grow = bool(archive_set.missing) or set_may_grow(archive_set, sizes=sizes)
            why = rules.left_out(archive_set, size=sum(sizes), may_grow=may_grow)
            if why:
                logger.info("Left out %s in %s: %s", archive_set.file_name, target.label, why)
                self.progress.add(filtered=1)
            else:
                taken.append(archive_set)
        return taken

    async def _process_messages(
        self, reader, target: ScanTarget, messages: list[DocumentMessage], writer, through: int
    ) -> "ScanResult":
        """Ingest the archive sets among messages in order; the watermark follows, never past a held failure."""
        self.progress.add(messages_scanned=len(messages))
        result = ScanResult()
        topic_of = (lambda message: message.topic_id) if target.topic else (lambda message: None)
        messages = await self._with_earlier_volumes(reader, target, messages, topic_of)
        sets = self._sets_taken(target, group_sets(messages, topic_of=topic_of))
        tried = {archive_set.items[0].id: {item.id for item in archive_set.items} for archive_set in sets}
        capped = await in_db_thread(selectors.skips_capped)(channel=target.channel_map.channel, sets=tried)
        lowest_held = None
        for index, archive_set in enumerate(sets):
            await self._prefetch_drop(keep=archive_set.items[0].id)
            await self._hand_over_sessions()
            if target.topic is not None and not await in_db_thread(selectors.topic_fetch_enabled)(topic=target.topic):
                result.stopped = True  # fetch turned off mid-run: stop after the current set
                await self._prefetch_drop()
                return result
            first_id = min(item.id for item in archive_set.items)
            if first_id in capped:
                continue
            if self.turns.get(target.channel_map.pk, 0) >= target.channel_map.channel.share:
                result.stopped = result.turn_over = self.more_left = True
                logger.info("%s took its share of the cycle; the rest goes on in the next one", target.label)
                break
            result.found += 1
            self.progress.add(archives_found=1)
            later = [s for s in sets[index + 1 :] if min(item.id for item in s.items) not in capped]
            # Not when this set, once uploaded, ends the channel's turn: the next one would wait a cycle on disk.
            share_left = self.turns.get(target.channel_map.pk, 0) + 1 < target.channel_map.channel.share
            self.up_next = (reader, target, later[0]) if later and share_left else None
            outcome = await self._process(reader, target, archive_set, writer)
            if outcome.kind == OutcomeKind.INGESTED:
                self.turns[target.channel_map.pk] = self.turns.get(target.channel_map.pk, 0) + 1
            if outcome.kind == OutcomeKind.SKIPPED:
                result.failures += 1
            if outcome.holds_watermark:
                lowest_held = first_id if lowest_held is None else min(lowest_held, first_id)
            remaining = [min(item.id for item in later.items) for later in sets[index + 1 :]]
            candidate = (min(remaining) - 1) if remaining else through
            if lowest_held is not None:
                candidate = min(candidate, lowest_held - 1)
            await in_db_thread(ingestion_services.watermark_advance)(holder=target.holder, message_id=candidate)
        self.up_next = None
        await self._prefetch_drop()
        if result.turn_over:
            return result
        result.held = lowest_held is not None
        if not result.held:
            await in_db_thread(ingestion_services.watermark_advance)(holder=target.holder, message_id=through)
        return result

    async def _with_earlier_volumes(
        self, reader: TelegramGateway, target: ScanTarget, messages: list[DocumentMessage], topic_of
    ) -> list[DocumentMessage]:
        """Volumes posted before the watermark (a set passed over as MISSING_PART) join the new volumes of
        their set, so the set is taken whole."""
        open_sets = await in_db_thread(selectors.skips_open)(
            channel=target.channel_map.channel, topic_id=target.topic_id
        )
        if not open_sets:
            return messages
        seen = {message.id for message in messages}
        wanted = {
            message_id
            for archive_set in group_sets(messages, topic_of=topic_of)
            for skipped in open_sets
            if same_family(archive_set, skipped.file_name)
            for message_id in skipped.message_ids
            if message_id not in seen
        }
        if not wanted:
            return messages
        fetched = await self._call(lambda: reader.get_messages(target.ref, sorted(wanted)))
        earlier = [message for message in fetched.values() if message is not None and message.document is not None]
        return sorted(messages + earlier, key=lambda message: message.id)

    # One archive set ----------------------------------------------------------------------------------------
    async def _process(
        self, reader: TelegramGateway, target: ScanTarget, archive_set: ArchiveSet, writer: Writer | None
    ) -> Outcome:
        items: list[DocumentMessage] = archive_set.items
        channel = target.channel_map.channel
        size = sum(item.document.size for item in items)
        await self.progress_report(current_file=archive_set.file_name, current_bytes_done=0, current_bytes_total=size)
        document_ids = [item.document.id for item in items]
        known = await in_db_thread(package_services.package_find)(
            document_ids=document_ids, source=(channel.chat_id, items[0].id)
        )
        if known is not None and replaced_since(known, items):
            known = None  # the post was edited to hold another file: new content, whatever its package was
        if known is not None and not known.reupload_needed:
            self.progress.add(duplicates=1)
            await in_db_thread(ingestion_services.skipped_package_resolve)(channel=channel, message_id=items[0].id)
            return Outcome(kind=OutcomeKind.DUPLICATE, package=known)
        try:
            return await self._attempt(reader, target, archive_set, writer, size)
        except SetFailed as failure:
            record = await in_db_thread(ingestion_services.skipped_package_record)(
                channel=channel,
                message_ids=[item.id for item in items],
                topic_id=target.topic_id,
                account=self.account,
                file_name=archive_set.file_name,
                file_size=size,
                part_count=len(items),
                reason=failure.reason,
                error_message=str(failure),
            )
            if failure.reason in PENDING_REASONS:
                logger.info("%s in %s: %s", archive_set.file_name, target.label, failure)
                return Outcome(kind=OutcomeKind.PENDING, holds_watermark=True)
            if failure.reason == SkipReason.DISK_FULL:
                await in_db_thread(notifications.notify_disk_full)(file_name=archive_set.file_name, error=str(failure))
            self.progress.add(skipped=1)
            logger.warning("Skipped %s in %s: %s", archive_set.file_name, target.label, failure)
            holds = record.is_retryable and record.attempt_count < settings.INGEST_MAX_SKIP_ATTEMPTS
            return Outcome(kind=OutcomeKind.SKIPPED, holds_watermark=holds)

    async def _attempt(
        self, reader: TelegramGateway, target: ScanTarget, archive_set: ArchiveSet, writer: Writer | None, size: int
    ) -> Outcome:
        """Take the set, or raise SetFailed with why not; any other surprise becomes the set's SetFailed too,
        so one set's trouble never ends the account's cycle."""
        try:
            waiting = await self._waiting(reader, target.ref, archive_set)
            if waiting:
                raise SetFailed(SkipReason.WAITING_FOR_VOLUMES, waiting)
            if archive_set.missing:
                raise SetFailed(SkipReason.MISSING_PART, f"{archive_set.file_name}: {archive_set.missing}.")
            if size > settings.INGEST_MAX_PACKAGE_BYTES:
                raise SetFailed(
                    SkipReason.SIZE_LIMIT,
                    f"{size} bytes is above INGEST_MAX_PACKAGE_BYTES ({settings.INGEST_MAX_PACKAGE_BYTES}).",
                )
            if writer is None:
                await in_db_thread(notifications.notify_destination_unreachable)()
                raise SetFailed(
                    SkipReason.NO_DESTINATION,
                    "No destination channel with a logged-in writer account; choose one on the Channels page.",
                )
            return await self._ingest(reader, target, archive_set, writer)
        except (SetFailed, CycleInterrupted, AuthRequired, AccountRestricted, WorkInterrupted, *OUTAGES):
            raise  # an outage (the database away) is not the set's fault
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise SetFailed(SkipReason.DISK_FULL, f"The staging disk is full ({exc}).") from exc
            raise SetFailed(SkipReason.ERROR, f"{exc.__class__.__name__}: {exc}") from exc
        except Exception as exc:
            if storage_outage(exc):
                # Not the archive's fault: no attempt is charged to the set, the watermark stays below it.
                raise CycleInterrupted(
                    f"Interrupted by an outage: {storage_describe()} did not answer ({exc.__class__.__name__}) "
                    f"while keeping {archive_set.file_name}; it is taken again next cycle."
                ) from exc
            logger.exception("Unexpected error while ingesting %s in %s", archive_set.file_name, target.label)
            raise SetFailed(SkipReason.ERROR, f"{exc.__class__.__name__}: {exc}") from exc

    async def _waiting(self, reader: TelegramGateway, ref: ChatRef, archive_set: ArchiveSet) -> str:
        """Why a volume set is not taken yet (more volumes may be on their way), or "" to take it now. What its
        volumes say of themselves decides (packages.completeness); time only when their bytes cannot tell."""
        if archive_set.volumes[0].scheme in ("single", "model") and not archive_set.missing:
            return ""
        items = archive_set.items
        newest = max(items, key=lambda item: item.date)
        age = time.time() - newest.date.timestamp()
        verdict = None if archive_set.missing else await self._set_verdict(reader, ref, archive_set)
        if verdict is not None and verdict.whole:
            logger.info("%s is whole (%s)", archive_set.file_name, verdict.rule)
            archive_set.whole_by = verdict.rule
            return ""
        settle, open_max = settings.INGEST_SET_SETTLE_SECONDS, settings.INGEST_SET_OPEN_MAX_SECONDS
        if verdict is not None and verdict.whole is False:
            if age >= open_max:
                archive_set.missing = f"{verdict.rule}, and none has come for {open_max / 60:.0f} min"
                return ""
            until = newest.date.timestamp() + open_max
            rule = f"{verdict.rule}. It is taken as soon as they are all posted"
        elif age < settle or (
            set_may_grow(archive_set, sizes=[item.document.size for item in items]) and age < open_max
        ):
            until = newest.date.timestamp() + (settle if age < settle else open_max)
            rule = f"the set is taken once no volume has arrived for {(until - newest.date.timestamp()) / 60:.0f} min"
            if verdict is not None:
                rule = f"{verdict.rule}, so {rule}"
        else:
            quiet = f"no new volume for {format_duration(age)}"
            archive_set.whole_by = f"time ({verdict.rule}): {quiet}" if verdict is not None else f"time: {quiet}"
            return ""
        self.waiting_until = until if self.waiting_until is None else min(self.waiting_until, until)
        return (
            f"Waiting for more volumes of {archive_set.file_name}: {newest.document.name} was posted "
            f"{age / 60:.0f} min ago; {rule}."
        )

    def _set_folder(self, ref: ChatRef, archive_set: ArchiveSet) -> Path:
        return self.staging / f"{ref.id}-{archive_set.items[0].id}"

    async def _prefetch_next(self, writer: Writer) -> None:
        """Once a set is on disk, the next set downloads while this one uploads: only one that would be taken
        (whole, settled, not ingested before), with parts in flight (1 = one thing at a time, as before), and
        never while another process waits for a session this cycle holds (it gets it at the next boundary)."""
        up_next, self.up_next = self.up_next, None
        if up_next is None or settings.TRANSFER_PARTS_IN_FLIGHT == 1:
            return
        reader, target, archive_set = up_next
        size = sum(item.document.size for item in archive_set.items)
        if size > settings.INGEST_MAX_PACKAGE_BYTES or await self._waiting(reader, target.ref, archive_set):
            return
        if archive_set.missing:
            return
        for gateway in self.gateways.values():
            if await gateway.wanted_elsewhere():
                return
        known = await in_db_thread(package_services.package_find)(
            document_ids=[item.document.id for item in archive_set.items],
            source=(target.channel_map.channel.chat_id, archive_set.items[0].id),
        )
        if known is None:
            self._prefetch_start(reader, target.ref, archive_set, self._set_folder(target.ref, archive_set), writer)

    async def _ingest(
        self, reader: TelegramGateway, target: ScanTarget, archive_set: ArchiveSet, writer: Writer
    ) -> Outcome:
        channel = target.channel_map.channel
        folder = self._set_folder(target.ref, archive_set)
        volumes = await self._prefetched(archive_set)  # (item, staged path, volume sha256)
        if volumes is None:
            volumes = await self._fetch_set(reader, target.ref, archive_set, folder, writer)
        await self._prefetch_next(writer)
        content_hash = content_hash_of([volume_hash for _, _, volume_hash in volumes])
        existing = await in_db_thread(package_services.package_find)(content_hash=content_hash)
        if existing is not None and not existing.reupload_needed:
            await self._duplicate(existing, channel, archive_set.items)
            return Outcome(kind=OutcomeKind.DUPLICATE, package=existing)
        try:
            raws = await in_db_thread(ingestion_services.archive_set_raw_files_record)(channel=channel, volumes=volumes)
        except package_services.RetentionMisconfigured as exc:
            raise SetFailed(SkipReason.CONFIGURATION, f"{channel.title}: {exc}") from exc
        except RawObjectUnreadable as exc:
            raise SetFailed(SkipReason.DOWNLOAD_FAILED, f"{archive_set.file_name}: {exc}") from exc

        names = [item.document.name for item in archive_set.items]
        staged = [path for _, path, _ in volumes]
        async with self._raw_files_local(raws, names, staged, folder) as paths:
            # Listed once, before the upload: a copy of a listing the operator skips is not uploaded.
            passwords = await in_db_thread(package_services.archive_password_candidates)(
                captions=[item.text for item in archive_set.items], chat_id=channel.chat_id
            )
            listing = await in_db_thread(package_services.package_listing_read)(
                archive_type=archive_set.archive_type, volume_paths=paths, passwords=passwords
            )
            original = await in_db_thread(package_services.package_skipped_copy_of)(listing=listing)
            if original is not None:
                await self._duplicate(original, channel, archive_set.items)
                return Outcome(kind=OutcomeKind.DUPLICATE, package=original)
            async with locks.async_advisory_lock(namespace=locks.CONTENT_HASH, name=content_hash) as acquired:
                if not acquired:
                    # Kept as pending, so the set is checked again until the other copy is in the destination.
                    raise SetFailed(
                        SkipReason.IN_FLIGHT,
                        f"Another worker is uploading the same content ({content_hash[:12]}…) right now; "
                        "checked again next cycle.",
                    )
                existing = await in_db_thread(package_services.package_find)(content_hash=content_hash)
                if existing is not None and not existing.reupload_needed:
                    await self._duplicate(existing, channel, archive_set.items)
                    return Outcome(kind=OutcomeKind.DUPLICATE, package=existing)
                hashes = [volume_hash for _, _, volume_hash in volumes]
                generation, live = 0, {}
                if existing is not None:
                    generation, live = existing.upload_generation + 1, await self._live_parts(existing, writer)
                dest_ids, part_names = await self._upload(
                    writer, archive_set.items, paths, hashes, folder, content_hash, generation, live
                )
                if existing is not None:
                    package = await in_db_thread(ingestion_services.archive_set_record_reupload)(
                        package=existing,
                        channel=channel,
                        items=archive_set.items,
                        dest_message_ids=dest_ids,
                        dest_part_names=part_names,
                        uploaded_by=writer.account,
                    )
                else:
                    package = await in_db_thread(ingestion_services.archive_set_record_upload)(
                        channel=channel,
                        topic=target.topic,
                        archive_set=archive_set,
                        content_hash=content_hash,
                        raws=raws,
                        destination_chat_id=writer.destination_chat_id,
                        dest_message_ids=dest_ids,
                        dest_part_names=part_names,
                        run=self.run,
                        uploaded_by=writer.account,
                    )
            if package.metadata_status == MetadataStatus.PENDING:
                await self.progress_report(current_step="indexing")
                await in_db_thread(package_services.package_metadata_fill)(
                    package=package, volume_paths=paths, listing=listing
                )
                await self._photo_preview(reader, target, archive_set.items, package)
        shutil.rmtree(folder, ignore_errors=True)
        await in_db_thread(notifications.notifications_resolve_uploads)()
        self.progress.add(ingested=1)
        return Outcome(kind=OutcomeKind.INGESTED, package=package)


def replaced_since(package: Package, items: list[DocumentMessage]) -> bool:
    """Whether the set's posts were edited after its package was made and now hold files it does not know."""
    edited = any(package_selectors.edited_after(item.edit_date, package) for item in items)
    return edited and not set(package.telegram_document_ids) >= {item.document.id for item in items}


def ingestion_run_execute(*, run: IngestionRun, on_progress=None) -> str:
    return IngestionCycle(run=run, on_progress=on_progress).execute()
