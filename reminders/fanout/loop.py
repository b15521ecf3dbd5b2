"""The send loop of one reminder run: one account sends the run's parts to its groups, paced (see the package)."""

import asyncio
import logging
import random
import shutil
import time
from collections import deque
from pathlib import Path

from django.conf import settings

from accounts import pace
from accounts.models import AccountChat
from accounts.sessions import account_gateway, account_refusal_record
from core import clock
from core.db_thread import in_db_thread
from core.engine import BUSY, RunEngine, WorkLost, WorkStopped, run_engine_start
from core.runs import run_finish, run_hand_back
from reminders import services
from reminders.fanout.parts import Part, part_build, part_send
from reminders.fanout.replace import Replacing
from reminders.fanout.retries import Retries
from reminders.fanout.stops import LeavePending, StopReason, Stops, TargetFailed
from reminders.models import MediaFile, ReminderRun, ReminderRunTarget, TargetStatus
from telegram.errors import SessionInUse, TelegramError
from telegram.formatting import FormatError, FormattedText
from telegram.gateway import TelegramGateway
from telegram.records import GROUP, ChatRef, MediaHandle, SentMessage

logger = logging.getLogger(__name__)

# What Telegram answers for a basic group that was deactivated (upgraded to a supergroup, or deleted).
GROUP_GONE = {"CHAT_ID_INVALID", "PEER_ID_INVALID", "CHAT_DEACTIVATED"}


def reminder_run_execute(*, run_id: int) -> str | None:
    """Send a queued run; its ending status, BUSY when its account is busy, None when there is nothing to do.
    A busy account's run says for what it waits; a run that let go of its account starts the next one at once."""
    ending = run_engine_start(model=ReminderRun, run_id=run_id, engine=Fanout)
    if ending == BUSY:
        services.reminder_run_wait_note(run_id=run_id)
    else:
        services.reminder_run_next_send(run_id=run_id)
    return ending


class Fanout(Stops, Retries, Replacing, RunEngine):
    def __init__(self, *, run: ReminderRun):
        super().__init__(run=run)
        self.reminder = run.reminder
        self.account = run.account
        self.stop_reason = ""
        self.stop_error: Exception | None = None
        self.lost_claim = False
        self.messages_sent = run.messages_sent
        self.pause_until = 0.0  # loop time until which Telegram asked this account to wait
        self.window_held = 0  # groups whose slow mode would put their next part after the window's end
        self.window_why = ""  # why the run stopped before its window's end, when it did
        self.window_deadline: float | None = None  # loop time of the window's end, from the last clock reading
        self.account_held = False  # a FloodWait holds the account past the window's end
        self.handles: dict[str, MediaHandle] = {}
        self.upload_locks: dict[str, asyncio.Lock] = {}
        self.temp_dir: Path | None = None
        self.parts: list[Part] = []
        self.options: dict = run.options  # silent, link_preview, pin, replace_previous, edit_in_place, as fired
        self.gateway: TelegramGateway | None = None
        self.recent: deque[str] = deque(maxlen=settings.REMINDER_ERROR_RECENT_GROUPS)  # "" sent, else the error
        self.tallied = self.messages_sent
        self.moved: dict[int, ChatRef] = {}  # basic groups upgraded to supergroups, by the group's Telegram id
        self.edit_refusal = ""  # what Telegram answered the last edit it refused

    # Entry point (sync, inside the account lock) ----------------------------------------------------------------
    def execute(self) -> str | None:
        started = time.monotonic()
        error = ""
        logger.info("Reminder run #%s: sending for %s", self.run.pk, self.account)
        services.reminder_run_started(run=self.run)
        try:
            self.drive(self._main)
        except SessionInUse:
            # Another process kept talking as this account past REMINDER_SESSION_WAIT_SECONDS (a long upload of
            # an ingestion cycle): nothing was sent, so the run is queued again and tried again later.
            run_hand_back(run=self.run, enqueue=False)
            logger.info("Reminder run #%s: %s is busy with another process; queued again", self.run.pk, self.account)
            return BUSY
        except WorkLost as lost:
            # Its lock or claim went (a database restart): the next worker goes on at each group's next part.
            self.hand_back(lost)
            return None
        except WorkStopped:  # the operator stopped it while it waited for the account's session
            self.lost_claim = True
        except Exception as exc:
            logger.exception("Reminder run #%s failed", self.run.pk)
            self._stop(StopReason.CRASHED, exc)
            error = f"{exc.__class__.__name__}: {exc}"
        finally:
            if self.temp_dir is not None:
                shutil.rmtree(self.temp_dir, ignore_errors=True)
        services.run_targets_in_flight_release(run=self.run)
        counts = services.target_counts(run_id=self.run.pk)
        progress = {
            **counts,
            "messages_sent": self.messages_sent,
            "active_seconds": self.run.active_seconds + time.monotonic() - started,
        }
        if self.stop_reason == StopReason.ACCOUNT_UNUSABLE:
            # PEER_FLOOD rested the account already (_peer_flood): what is left here makes it unusable.
            account_refusal_record(account=self.account, error=self.stop_error, doing=f"during run #{self.run.pk}")
        pace.account_sends_tally(account=self.account, sends=self.messages_sent - self.tallied)
        status, summary, cause = self._ending(counts, error)
        if self.lost_claim or not run_finish(
            run=self.run, status=status, error=error, error_summary=summary, pause_cause=cause, **progress
        ):
            # paused or canceled while sending: the operator set the ending; keep the counters and summary true
            services.reminder_run_cancel_settle(run_id=self.run.pk, progress=progress)
            return None
        logger.info("Reminder run #%s: %s %s", self.run.pk, status, summary)
        services.reminder_run_notify(run=self.run)
        return status

    # Database steps (sync, called through in_db_thread()) -------------------------------------------------------------
    def _load(self) -> tuple[list[ReminderRunTarget], dict[int, int]]:
        targets = list(
            self.run.targets.filter(status__in=[TargetStatus.PENDING, TargetStatus.SENDING])
            .select_related("chat")
            .order_by("pk")
        )
        hashes = dict(AccountChat.objects.filter(account=self.account).values_list("chat_id", "access_hash"))
        media_ids = {
            media_id for part in self.run.parts for media_id in [part["media"], *part.get("album", [])] if media_id
        }
        media = MediaFile.objects.in_bulk(media_ids) if media_ids else {}
        missing = sorted(media_ids - media.keys())
        if missing:
            self._stop(StopReason.MEDIA_UNUSABLE, ValueError(f"media #{missing[0]} of this run was deleted."))
        self.account.refresh_from_db()
        self.parts = [self._part(part, media) for part in self.run.parts]
        if pace.account_send_problem(account=self.account):
            self._stop(StopReason.ACCOUNT_RESTING)
        return targets, hashes

    def _part(self, part: dict, media: dict[int, MediaFile]) -> Part:
        try:
            return part_build(part=part, media=media, premium=self.account.is_premium)
        except FormatError as exc:  # checked when saved; the account may have lost Premium since
            self._stop(StopReason.TEXT_UNSENDABLE, exc)
            return Part(formatted=FormattedText(text=""), media=None)

    def _flush(self) -> None:
        services.reminder_run_progress_record(
            run_id=self.run.pk,
            progress={**services.target_counts(run_id=self.run.pk), "messages_sent": self.messages_sent},
        )
        sends, self.tallied = self.messages_sent - self.tallied, self.messages_sent
        pace.account_sends_tally(account=self.account, sends=sends)
        if sends:
            self.progressed()

    def _target_start(self, target: ReminderRunTarget) -> bool:
        """False when the target was canceled meanwhile, or the run is no longer this worker's (the operator
        paused or canceled it): then the worker stops at this group boundary."""
        started = services.run_target_start(target=target, run=self.run)
        if not started and not services.reminder_run_still_held(run=self.run):
            self.lost_claim = True
        return started

    def _part_sent(self, target: ReminderRunTarget, index: int) -> None:
        services.run_target_part_sent(target=target, parts_sent=index + 1)
        target.parts_sent = index + 1

    def _target_end(self, target: ReminderRunTarget, status: str, error: str = "", latency_ms=None) -> None:
        services.run_target_end(
            target=target, status=status, error=error, latency_ms=latency_ms, parts_total=len(self.parts)
        )
        if status in (TargetStatus.SENT, TargetStatus.FAILED):
            self._count_outcome(error if status == TargetStatus.FAILED else "")

    def _target_left(self, target: ReminderRunTarget) -> None:
        """A group stopped part-way goes on at its next part when the run resumes; one the operator's Cancel
        skipped (or Pause made pending) already stays as the operator left it (services.run_target_end)."""
        self._target_end(target, TargetStatus.PENDING)

    # The fan-out ----------------------------------------------------------------------------------------------
    async def _main(self) -> None:
        targets, hashes = await in_db_thread(self._load)()
        if self.stop_reason:
            return
        self.bucket = pace.account_bucket(account=self.account)
        queue = deque(targets)
        # Fan-out waits longer for the account's session than others: an ingestion cycle holding it hands it
        # over at its next set boundary.
        async with account_gateway(
            account=self.account, wait_seconds=settings.REMINDER_SESSION_WAIT_SECONDS
        ) as gateway:
            self.gateway = gateway
            progress = asyncio.create_task(self._keep_progress())
            try:
                async with asyncio.TaskGroup() as group:
                    for _ in range(min(settings.REMINDER_GROUP_CONCURRENCY, len(queue))):
                        group.create_task(self._worker(queue, hashes))
            except BaseExceptionGroup as errors:
                raise errors.exceptions[0] from None
            finally:
                progress.cancel()
                await asyncio.gather(progress, return_exceptions=True)

    async def _keep_progress(self) -> None:
        """The counters the pages show; the claim is proved by the engine's heartbeat, not here."""
        while True:
            await asyncio.sleep(settings.REMINDER_PROGRESS_EVERY_SECONDS)
            await in_db_thread(self._flush)()

    async def _worker(self, queue: deque, hashes: dict[int, int]) -> None:
        while queue and not self.stop_reason and not self.lost_claim:
            now = clock.now()
            if self._window_closed_by(now):
                self._stop_window()
                return
            self._window_seen(now)
            await self._deliver(queue.popleft(), hashes)

    async def _deliver(self, target: ReminderRunTarget, hashes: dict[int, int]) -> None:
        access_hash = hashes.get(target.chat_id)
        if access_hash is None and target.chat.type == GROUP:
            # A basic group needs no access hash; one upgraded to a supergroup drops out of the account's chats
            # at the next refresh, and the send's answer tells which it is.
            access_hash = 0
        if access_hash is None:
            error = f"{self.account} is no longer in “{target.chat.title}”; refresh its chats."
            await in_db_thread(self._target_end)(target, TargetStatus.FAILED, error)
            return
        if not await in_db_thread(self._target_start)(target):
            return
        ref = ChatRef(id=target.chat.telegram_id, access_hash=access_hash, type=target.chat.type)
        started = time.monotonic()
        last_sent = 0.0
        first = target.parts_sent
        target.message_ids += [None] * (len(self.parts) - len(target.message_ids))
        try:
            editing: list[int] = []  # the previous post's messages, edited part by part
            if self.options.get("replace_previous"):
                editing = await self._replace_previous(target, ref, first)
            for index in range(first, len(self.parts)):
                if index > first:
                    await self._between_parts(target, last_sent)
                if editing and not await self._edit(target, ref, index, self.parts[index], editing[index]):
                    await self._edit_refused(target, ref, index, editing)
                    editing = []
                if editing:
                    target.message_ids[index] = editing[index]
                    last_sent = asyncio.get_running_loop().time()
                else:
                    last_sent = await self._send(target, ref, index, self.parts[index])
                if index + 1 < len(self.parts):  # the last part is recorded with the group's end, one query less
                    await in_db_thread(self._part_sent)(target, index)
            if self.options.get("pin") and not target.pinned and target.message_ids[0]:
                await self._pin(target, ref)
        except (LeavePending, WorkStopped) as exc:
            # WorkStopped: the operator's Pause or Cancel woke this group from its wait (or met it at a send).
            self.lost_claim = self.lost_claim or isinstance(exc, WorkStopped)
            await in_db_thread(self._target_left)(target)
            return
        except TargetFailed as exc:
            await in_db_thread(self._target_end)(target, TargetStatus.FAILED, str(exc))
            return
        latency_ms = round((time.monotonic() - started) * 1000)
        await in_db_thread(self._target_end)(target, TargetStatus.SENT, "", latency_ms)

    async def _between_parts(self, target: ReminderRunTarget, last_sent: float) -> None:
        """Parts of one group in order, a human-looking pause apart, and never faster than its slow mode."""
        loop = asyncio.get_running_loop()
        delay = random.uniform(settings.REMINDER_PART_JITTER_MIN_MS, settings.REMINDER_PART_JITTER_MAX_MS) / 1000
        if target.chat.slow_mode_seconds:
            delay = max(delay, last_sent + target.chat.slow_mode_seconds - loop.time())
        left = self._window_left()
        if left is not None and delay >= left:
            self._window_hold()
        await self.sleep(delay)

    async def _send(self, target: ReminderRunTarget, ref: ChatRef, index: int, part: Part) -> float:
        """Send one part; returns when it went out (loop time)."""

        async def send(handles: list[MediaHandle]) -> SentMessage:
            media, album = (handles[0], handles[1:]) if part.media else (None, handles)
            return await part_send(
                self.gateway,
                self.moved.get(ref.id, ref),
                part,
                random_id=target.random_ids[index],
                media=media,
                album=album,
                topic_id=target.topic_id,
                options=self.options,
            )

        async def migrated(refused: TelegramError) -> bool:
            now = self.moved.get(ref.id, ref)
            if now.type == GROUP and refused.rpc in GROUP_GONE:
                await self._follow_migration(target, now, refused)
                return True
            return False

        try:
            sent = await self._request(send, media=part.files, mend=migrated)
        except TelegramError as exc:  # TargetForbidden, NotFound and the like: this group only
            raise TargetFailed(f"{exc.rpc}: {exc}" if exc.rpc else str(exc)) from exc
        self.messages_sent += 1
        target.message_ids[index] = sent.id
        target.album_ids += sent.album_ids
        return asyncio.get_running_loop().time()

    async def _follow_migration(self, target: ReminderRunTarget, ref: ChatRef, refused: TelegramError) -> None:
        """A basic group refused the part: when Telegram upgraded it to a supergroup, the part goes there (and
        every reminder follows it); otherwise the group is gone, and the target fails saying which and why."""
        title = target.chat.title
        try:
            supergroup = await self.gateway.chat_migrated_to(ref)
        except TelegramError as exc:
            if exc.rpc == "CHANNEL_PRIVATE":
                raise TargetFailed(
                    f"“{title}” was upgraded to a supergroup that {self.account} is not in ({exc.rpc}); add the "
                    "account there, or remove the group from the reminder."
                ) from refused
            raise TargetFailed(
                f"{self.account} can no longer see “{title}” ({exc.rpc}): it was removed from the group, or the group "
                "was deleted; add it again, or remove the group from the reminder."
            ) from refused
        if supergroup is None:
            raise TargetFailed(
                f"“{title}” takes no more posts from {self.account} ({refused.rpc}) and did not become a supergroup: "
                "it was deleted or deactivated, or the account was removed; remove it from the reminder."
            ) from refused
        await in_db_thread(services.chat_migration_follow)(account=self.account, chat=target.chat, to=supergroup)
        self.moved[ref.id] = supergroup.ref
