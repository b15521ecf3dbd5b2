"""One account's ingestion cycle: the engine that runs its stages.

The cycle (a `core.engine.RunEngine`) starts like every engine (`run_engine_start`: the account's lock, then the
claim or the take-over), opens the gateways, asks which channels changed, writes its progress and the channels'
scan history, and lends its sessions at set boundaries. The work is done by stage objects it builds and gives a
`CycleContext` (`cycle.py`): scanning a channel (`scan_stage.py`), taking one set (`taking.py`), fetching
(`fetching.py`), uploading (`uploading.py`), the posted photo as its preview (`previewing.py`); recording and
indexing are services of `ingestion` and `packages`.
"""

import logging
import math
import shutil
import time
from collections.abc import Callable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import timezone

from accounts.ingest_limits import account_ingest_wait
from accounts.models import TelegramAccount
from accounts.sessions import account_gateway, account_refusal_record
from core import locks
from core.db_thread import in_db_thread
from core.engine import OUTAGES, RunEngine, WorkInterrupted, WorkLost, WorkStopped, run_engine_start
from core.models import RunStatus
from core.runs import run_finish
from ingestion import notifications, scanning, selectors
from ingestion import services as ingestion_services
from ingestion.cycle import (
    SCAN_COUNTERS,
    AccountRefused,
    CycleContext,
    CycleInterrupted,
    Progress,
    ScanLog,
    SetFailed,
    sleep_flood_wait,
)
from ingestion.fetching import FetchStage
from ingestion.models import AccountChannelMap, IngestionRun, SkipReason
from ingestion.previewing import PreviewStage
from ingestion.scan_stage import ScanStage
from ingestion.taking import SetStage
from ingestion.transfer_budget import TransferBudget
from ingestion.uploading import UploadStage
from telegram.errors import (
    AccountRestricted,
    AuthRequired,
    FloodWait,
    NotFound,
    SessionInUse,
    TargetForbidden,
    TransientError,
)
from telegram.gateway import TelegramGateway
from telegram.records import LAST_MESSAGE_BATCH, ChatRef
from telegram.retry import TransientRetries

logger = logging.getLogger(__name__)


class IngestionCycle(RunEngine):
    def __init__(self, *, run: IngestionRun, on_progress: Callable[[IngestionRun], None] | None = None):
        super().__init__(run=run)
        self.account = run.account
        self.progress = Progress(run=run)
        self.on_progress = on_progress
        self.gateways: dict[int, TelegramGateway] = {}
        self.interrupted = False  # stopped undecided (an outage, a lost lock): whole downloads are kept
        self.context = CycleContext(
            run=run,
            account=self.account,
            progress=self.progress,
            staging=Path(settings.INGEST_STAGING_DIR) / f"run-{run.pk}",
            started=timezone.now(),
            report=self.progress_report,
            call=self._call,
            gateway=self._gateway,
            at_set_boundary=self._hand_over_sessions,
            wanted_elsewhere=self._wanted_elsewhere,
        )
        self.fetch = FetchStage(self.context)
        self.preview = PreviewStage(self.context)
        self.take = SetStage(self.context, fetch=self.fetch, upload=UploadStage(self.context), preview=self.preview)
        self.scan = ScanStage(self.context, fetch=self.fetch, take=self.take, preview=self.preview)

    # Entry point (sync) -----------------------------------------------------------------------------------
    def execute(self) -> str:
        """Run the cycle (its account's lock held, its run claimed: `ingestion_run_execute`); returns its ending."""
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
        except AccountRefused as refused:
            status, error = self._refused(refused.account, refused.error)
        except (AuthRequired, AccountRestricted) as exc:
            status, error = self._refused(self.account, exc)
        except Exception as exc:
            logger.exception("Ingestion run %s failed", self.run.pk)
            status, error = RunStatus.FAILED, f"{exc.__class__.__name__}: {exc}"
        finally:
            if self.interrupted:
                self.fetch.downloads_keep()
            shutil.rmtree(self.context.staging, ignore_errors=True)
        self._flush(force=True)
        self._finish(status, error)
        self._come_back_for_waiting_sets()
        self._come_back_for_the_rest()
        return status

    def _refused(self, account: TelegramAccount, exc: AuthRequired | AccountRestricted) -> tuple[str, str]:
        """Telegram refused one of the cycle's accounts: it rests (PEER_FLOOD) or is marked unusable."""
        if account_refusal_record(account=account, error=exc, doing=f"during ingestion run #{self.run.pk}"):
            return RunStatus.PARTIAL, f"Stopped: {account} is resting ({exc}); the cycle goes on after the rest."
        notifications.notify_account_unusable(account=account)
        return RunStatus.FAILED, f"{account}: {exc}"

    def _come_back_for_the_rest(self) -> None:
        """A channel whose share of this cycle ran out (a backfill) goes on in the next cycle, queued at once, so
        every other channel has had its turn in between."""
        if not self.context.more_left:
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
        if self.context.waiting_until is None:
            return
        countdown = max(1, math.ceil(self.context.waiting_until - time.time()))
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
        ingestion_services.run_progress_write(run=self.run, fields={name: getattr(self.run, name) for name in names})
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
                            await self.scan.scan_channel(reader, channel_map, ref, writer, last_id)
                        await self.scan.take_edited(reader, channel_map, ref, writer)
                        if channel_map.channel.last_error and not idle:
                            await in_db_thread(ingestion_services.channel_error_clear)(channel=channel_map.channel)
                    except (TargetForbidden, NotFound, TransientError) as exc:
                        # One unreachable channel does not stop the others; it is retried next cycle.
                        await in_db_thread(self._channel_unreachable)(channel_map, str(exc))
                        problems.append(f"{channel_map.channel.title}: {exc}")
                        log.note(scanning.FAILED, str(exc))
                    except (
                        CycleInterrupted,
                        AccountRefused,
                        AuthRequired,
                        AccountRestricted,
                        WorkInterrupted,
                        *OUTAGES,
                    ) as exc:
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
            await self.fetch.prefetch_drop()
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

    async def _hand_over_sessions(self) -> None:
        """At a set boundary, lend the sessions this cycle holds to a process waiting for them (a reminder
        run, another account's cycle uploading through this writer), then take them back. Not while the next set
        downloads in the background: none is started once someone waits, so the next boundary is free. A cycle
        whose account started resting stops here; it goes on after the rest."""
        # The accounts of this cycle that started resting (accounts.pace): nothing more goes through them.
        resting = await in_db_thread(selectors.accounts_resting)(account_ids=list(self.gateways))
        if resting:
            raise CycleInterrupted(f"Stopped: {', '.join(resting)} is resting; the cycle goes on after the rest.")
        if self.fetch.prefetching:
            return
        for gateway in self.gateways.values():
            try:
                if await gateway.hand_over_if_wanted(wait_seconds=settings.INGEST_SESSION_HANDOVER_WAIT_SECONDS):
                    logger.info("Handed the session of %s over at a set boundary, and took it back", gateway.phone)
            except SessionInUse as exc:
                raise CycleInterrupted(f"{gateway.phone} is busy elsewhere (sending reminders?): {exc}") from exc

    async def _wanted_elsewhere(self) -> bool:
        """Whether another process waits for a session this cycle holds (it gets it at the next set boundary)."""
        for gateway in self.gateways.values():
            if await gateway.wanted_elsewhere():
                return True
        return False

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
            gateway = account_gateway(account=account, transfer_budget=TransferBudget(account=account))
            try:
                await gateway.__aenter__()
            except (AuthRequired, AccountRestricted) as exc:
                if account.pk == self.account.pk:
                    raise
                raise AccountRefused(account, exc) from exc
            except SessionInUse as exc:
                if account.pk == self.account.pk:
                    raise CycleInterrupted(f"{account} is busy in another process: {exc}") from exc
                raise SetFailed(SkipReason.UPLOAD_FAILED, f"The writer {account} is busy: {exc}") from exc
            self.gateways[account.pk] = gateway
        return self.gateways[account.pk]

    def _channel_unreachable(self, channel_map: AccountChannelMap, error: str) -> None:
        ingestion_services.channel_error_record(channel=channel_map.channel, account=self.account, error=error)
        notifications.notify_channel_unreachable(channel=channel_map.channel, account=self.account, error=error)

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


def ingestion_run_execute(*, run_id: int, on_progress: Callable[[IngestionRun], None] | None = None) -> str | None:
    """Work a queued run, or take over one whose worker is surely gone, under its account's ingestion lock (not
    the sending one: a cycle and a reminder run of one account share its session at set boundaries): its ending,
    BUSY when another run holds the account (the task tries again later), None when there is nothing to do."""
    cycle = partial(IngestionCycle, on_progress=on_progress)
    return run_engine_start(model=IngestionRun, run_id=run_id, engine=cycle, lock_namespace=locks.ACCOUNT)
