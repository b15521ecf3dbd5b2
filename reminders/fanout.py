"""The fan-out of one reminder run: one account sends the run's parts to its groups, paced.

`reminder_run_execute` takes the account's advisory lock (one run per account at a time; other
accounts go in parallel), claims the run, and sends. The sending is async (Telegram I/O, up to
REMINDER_GROUP_CONCURRENCY groups at once); every database step is a synchronous function called
through `sync_to_async(thread_sensitive=True)`, so the ORM never runs on the event loop and keeps
the connection that holds the lock. Per group: the run target is marked `sending`, each part
waits for a token of the account's Redis bucket, is sent with the random_id stored when the run was
fired and is counted in the target's `parts_sent`; the target is `sent` once every part is, or
`failed`. A target stopped part-way (window, pause, cancel, a dead worker) goes on at its next
unsent part; only the part in flight when a worker died is sent again, with the same random_id,
so Telegram answers RANDOM_ID_DUPLICATE instead of posting twice.

The pace adapts (accounts.pace, core.ratelimit): a FloodWait, SLOWMODE_WAIT or PEER_FLOOD lowers the account's
shared budget and is recorded; clean sending raises it back. PEER_FLOOD, or too many FloodWaits in a while, rest
the account: its bucket halts, so every worker of it stops at its next message, and every run of it pauses. A run
whose recent groups fail above REMINDER_ERROR_SHARE_PERCENT pauses itself; an operator's Pause stops it at its next
group. No part goes out after the window's end: a token due after it (a FloodWait holding the account) pauses the
run before that part. A basic group Telegram upgraded to a supergroup is followed there (services.moved_groups).
Every Telegram request of a run (a part sent or edited, a post deleted or pinned, a media uploaded) goes through one
set of retry rules, `Fanout._request`; each caller says only what a refusal means for it.

Why this size: one paced send loop, its retry rules and its stop rules (window, pause, FloodWait, rest, errors,
cancel), read together.
"""

import asyncio
import logging
import random
import shutil
import tempfile
import time
from collections import Counter, deque
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from pathlib import Path
from typing import TypeVar

from django.conf import settings

from accounts import pace
from accounts.models import AccountChat, PaceEventKind, TelegramAccount
from accounts.sessions import account_gateway, account_refusal_record
from core import clock
from core.db_thread import in_db_thread
from core.engine import BUSY, RunEngine, WorkLost, WorkStopped, run_engine_start
from core.models import RunStatus
from core.ratelimit import BucketHalted, BucketTooLate, BucketUnavailable, Pace
from core.runs import run_finish, run_hand_back
from reminders import services
from reminders.models import MediaFile, PauseCause, PreviousPost, ReminderRun, ReminderRunTarget, TargetStatus
from telegram.errors import (
    AccountRestricted,
    AuthRequired,
    FileReferenceExpired,
    FileTooLarge,
    FloodWait,
    SessionInUse,
    TelegramError,
    TransientError,
)
from telegram.formatting import PLAIN, FormatError, FormattedText
from telegram.gateway import TelegramGateway
from telegram.records import GROUP, ChatRef, MediaHandle, SentMessage
from telegram.retry import TransientRetries

logger = logging.getLogger(__name__)
T = TypeVar("T")

SLOWMODE_WAIT = "SLOWMODE_WAIT"
PEER_FLOOD = "PEER_FLOOD"
# What Telegram answers for a basic group that was deactivated (upgraded to a supergroup, or deleted).
GROUP_GONE = {"CHAT_ID_INVALID", "PEER_ID_INVALID", "CHAT_DEACTIVATED"}


class StopReason(StrEnum):
    """Why a run stops before every target was tried."""

    WINDOW_CLOSED = "window closed"
    ACCOUNT_UNUSABLE = "account unusable"  # its session is gone or Telegram restricted it
    MEDIA_UNUSABLE = "media unusable"  # deleted, or too large for this account
    TEXT_UNSENDABLE = "text unsendable"  # a part's text Telegram would refuse (a custom emoji, Premium lost since)
    CRASHED = "crashed"  # an unexpected exception in the engine itself
    ACCOUNT_RESTING = "account resting"  # the account rests or its sending was stopped: the bucket is halted
    TOO_MANY_FAILURES = "too many failures"  # too many recent groups failed
    BUDGET_OUTAGE = "budget outage"  # Redis (the shared budget) did not answer: nothing can be paced


class _LeavePending(Exception):
    """The run is stopping: this target goes back to `pending` (its random_ids make a later resend safe)."""


class _TargetFailed(Exception):
    """This group only: the target is `failed` with this message."""


@dataclass(frozen=True)
class Part:
    formatted: FormattedText  # the text, or the caption of the media, as Telegram takes it
    media: MediaFile | None
    album: tuple[MediaFile, ...] = ()  # sent as one album (one request) instead of `media`

    @property
    def files(self) -> tuple[MediaFile, ...]:
        """What the part uploads: its media, then its album's (a part has one or the other)."""
        return (self.media, *self.album) if self.media else self.album


def reminder_run_execute(*, run_id: int) -> str | None:
    """Send a queued run; its ending status, BUSY when its account is busy, None when there is nothing to do.
    A busy account's run says for what it waits; a run that let go of its account starts the next one at once."""
    ending = run_engine_start(model=ReminderRun, run_id=run_id, engine=Fanout)
    if ending == BUSY:
        services.reminder_run_wait_note(run_id=run_id)
    else:
        services.reminder_run_next_send(run_id=run_id)
    return ending


class Fanout(RunEngine):
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

    def _ending(self, counts: dict[str, int], error: str) -> tuple[str, str, str]:
        """The run's status, summary and pause cause."""
        run = self.run
        partly = services.targets_partly_sent(run_id=run.pk) if self.stop_reason or self.window_held else 0
        if self.stop_reason == StopReason.WINDOW_CLOSED or (not self.stop_reason and self.window_held):
            if not self.stop_reason:
                groups = "1 group" if self.window_held == 1 else f"{self.window_held} groups"
                self.window_why = f"slow mode would put the next part of {groups} after it"
            status = RunStatus.PAUSED if counts["sent"] or partly else RunStatus.FAILED
            summary = services.summary_window_closed(run=run, counts=counts, partly=partly, before=self.window_why)
            return status, summary, PauseCause.WINDOW
        if self.stop_reason == StopReason.ACCOUNT_RESTING:
            account = TelegramAccount.objects.get(pk=self.account.pk)
            summary = services.summary_account_resting(run=run, account=account, counts=counts, partly=partly)
            cause = PauseCause.SENDING_STOPPED if account.sending_stopped else PauseCause.ACCOUNT_REST
            return RunStatus.PAUSED, summary, cause
        if self.stop_reason == StopReason.BUDGET_OUTAGE:
            summary = services.summary_outage(run=run, counts=counts, reason=f"{self.stop_error}", partly=partly)
            return RunStatus.PAUSED, summary, PauseCause.OUTAGE
        if self.stop_reason == StopReason.TOO_MANY_FAILURES:
            reasons = Counter(error for error in self.recent if error)
            summary = services.summary_too_many_failed(run=run, counts=counts, reasons=reasons, partly=partly)
            return RunStatus.PAUSED, summary, PauseCause.ERRORS
        if self.stop_reason == StopReason.ACCOUNT_UNUSABLE:
            exc = self.stop_error
            if isinstance(exc, AuthRequired):
                reason = f"the session of {self.account} is no longer valid ({exc.rpc}); log it in again."
            else:
                reason = f"Telegram restricted {self.account} ({exc.rpc or exc})."
            return RunStatus.FAILED, services.summary_stopped(run=run, counts=counts, reason=reason, partly=partly), ""
        if self.stop_reason in (StopReason.MEDIA_UNUSABLE, StopReason.TEXT_UNSENDABLE):
            summary = services.summary_stopped(run=run, counts=counts, reason=f"{self.stop_error}", partly=partly)
            return RunStatus.FAILED, summary, ""
        if self.stop_reason == StopReason.CRASHED:
            summary = services.summary_stopped(run=run, counts=counts, reason=f"{error}.", partly=partly)
            return RunStatus.FAILED, summary, ""
        if counts["failed"] == 0 and counts["pending"] == 0:
            return RunStatus.SUCCESS, "", ""
        status = RunStatus.PARTIAL if counts["sent"] else RunStatus.FAILED
        return status, services.summary_finished(run=run, counts=counts), ""

    def _stop(self, reason: str, error: Exception | None = None) -> None:
        if not self.stop_reason:
            self.stop_reason, self.stop_error = reason, error

    def _window_closed_by(self, moment) -> bool:
        """An all-day window (no end) never closes."""
        return self.run.window_end_at is not None and moment >= self.run.window_end_at

    def _window_seen(self, now) -> None:
        """Keep the window's end on the loop's clock: every part is checked against it without reading the time."""
        if self.run.window_end_at is not None:
            loop = asyncio.get_running_loop()
            self.window_deadline = loop.time() + (self.run.window_end_at - now).total_seconds()

    def _window_left(self) -> float | None:
        """Seconds until the window closes; None for an all-day window."""
        if self.window_deadline is None:
            return None
        return self.window_deadline - asyncio.get_running_loop().time()

    def _stop_window(self, why: str = "", *, account_held: bool = False) -> None:
        """No part goes out after the window's end: the run stops before its next part, and every group stopped
        part-way goes on at that part when it resumes. A FloodWait past the end stops the groups in flight too."""
        if not self.stop_reason:
            self.window_why = why
            self.account_held = account_held
        self._stop(StopReason.WINDOW_CLOSED)

    @property
    def _aborting(self) -> bool:
        """Account-wide trouble stops even the groups in flight; a closing window lets each go on while its next
        part still fits before the end."""
        return (
            self.stop_reason
            in {
                StopReason.ACCOUNT_UNUSABLE,
                StopReason.MEDIA_UNUSABLE,
                StopReason.ACCOUNT_RESTING,
                StopReason.BUDGET_OUTAGE,
            }
            or self.account_held
        )

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

    def _previous_post(self, target: ReminderRunTarget) -> ReminderRunTarget | None:
        """The group's post from the reminder's run before this one (what Replace deletes, Pin unpins)."""
        return (
            ReminderRunTarget.objects.filter(
                run__reminder_id=self.run.reminder_id,
                run_id__lt=self.run.pk,
                chat_id=target.chat_id,
                topic_id=target.topic_id,
            )
            .exclude(message_ids=[])
            .order_by("-run_id")
            .first()
        )

    def _previous_parts(self, previous: ReminderRunTarget) -> list[dict]:
        return ReminderRun.objects.filter(pk=previous.run_id).values_list("parts", flat=True).get()

    def _target_step_done(self, target: ReminderRunTarget, step: str) -> None:
        services.run_target_step_done(target=target, step=step)

    def _previous_recorded(
        self, target: ReminderRunTarget, post: str, note: str = "", done: bool | None = None
    ) -> None:
        """What Replace does with the previous post, recorded before it is done: a resume or a retry goes on
        the same way (editing at its next part while it edits), never deleting or editing twice."""
        done = post != PreviousPost.EDITED if done is None else done
        services.run_target_previous_record(target=target, post=post, note=note[:300], done=done)
        target.previous_post, target.previous_note, target.previous_removed = post, note[:300], done

    def _rest(self, reason: str) -> None:
        pace.account_rest(account=self.account, reason=reason)  # every run of it pauses (reminders.apps)

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

    def _count_outcome(self, error: str) -> None:
        """More than the allowed share of the last groups failed: stop burning through the list."""
        self.recent.append(error)
        failed = sum(1 for outcome in self.recent if outcome)
        share = settings.REMINDER_ERROR_SHARE_PERCENT / 100
        if share and failed > share * self.recent.maxlen:
            self._stop(StopReason.TOO_MANY_FAILURES)

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
        except (_LeavePending, WorkStopped) as exc:
            # WorkStopped: the operator's Pause or Cancel woke this group from its wait (or met it at a send).
            self.lost_claim = self.lost_claim or isinstance(exc, WorkStopped)
            await in_db_thread(self._target_left)(target)
            return
        except _TargetFailed as exc:
            await in_db_thread(self._target_end)(target, TargetStatus.FAILED, str(exc))
            return
        latency_ms = round((time.monotonic() - started) * 1000)
        await in_db_thread(self._target_end)(target, TargetStatus.SENT, "", latency_ms)

    async def _replace_previous(self, target: ReminderRunTarget, ref: ChatRef, first: int) -> list[int]:
        """Replace the previous run's post in the group, once: edited in place when asked and the parts allow
        (returns its messages, one per part, to edit), else deleted before the first part goes out."""
        if target.previous_removed:
            return []
        if target.previous_post == PreviousPost.EDITED:  # a resumed or retried group goes on editing
            previous = await in_db_thread(self._previous_post)(target)
            return list(previous.message_ids) if previous is not None else []
        if first > 0:
            return []
        previous = await in_db_thread(self._previous_post)(target)
        if previous is None:
            await in_db_thread(self._previous_recorded)(target, PreviousPost.NONE)
            return []
        if self.options.get("edit_in_place"):
            why = self._not_editable(previous, await in_db_thread(self._previous_parts)(previous))
            if not why:
                await in_db_thread(self._previous_recorded)(target, PreviousPost.EDITED)
                return list(previous.message_ids)
            await in_db_thread(self._previous_recorded)(target, PreviousPost.DELETED, why)
        else:
            await in_db_thread(self._previous_recorded)(target, PreviousPost.DELETED)
        await self._delete(ref, [*(i for i in previous.message_ids if i), *previous.album_ids])
        return []

    def _not_editable(self, previous: ReminderRunTarget, previous_parts: list[dict]) -> str:
        """Why the previous post cannot be edited into this one ("" when it can): Telegram edits one message
        into one message, so the posts must have the same parts, text for text and one media for one media."""
        if any(part.get("album") for part in previous_parts) or any(part.album for part in self.parts):
            return "an album cannot be edited into another post"
        shapes = [bool(part["media"]) for part in previous_parts]
        if shapes != [part.media is not None for part in self.parts]:
            return "the parts changed (text and media must stay in the same places)"
        if len(previous.message_ids) != len(self.parts) or None in previous.message_ids:
            return "the previous post's messages are not all known"
        return ""

    async def _delete(self, ref: ChatRef, ids: list[int]) -> None:
        if ids:
            await self._telegram_step(lambda: self.gateway.delete_messages(self.moved.get(ref.id, ref), ids))

    async def _edit(self, target: ReminderRunTarget, ref: ChatRef, index: int, part: Part, message_id: int) -> bool:
        """Edit the previous post's message of this part into it; False when Telegram refuses (the message is
        gone, or too old to edit). The same content again (a retried edit) is no error."""

        async def edit(handles: list[MediaHandle]) -> None:
            await self.gateway.edit_message(
                self.moved.get(ref.id, ref),
                message_id,
                text=part.formatted.text,
                entities=part.formatted.entities,
                media=handles[0] if handles else None,
                link_preview=self.options.get("link_preview", True),
            )

        try:
            await self._request(edit, media=part.files)
        except TelegramError as exc:
            self.edit_refusal = exc.rpc or str(exc)
            return False
        self.messages_sent += 1
        return True

    async def _edit_refused(self, target: ReminderRunTarget, ref: ChatRef, index: int, editing: list[int]) -> None:
        """Telegram refused to edit a part: the previous post's messages from it on are deleted and the parts
        sent anew (all of them when it was the first part)."""
        note = f"Telegram refused the edit ({self.edit_refusal})"
        post = PreviousPost.DELETED
        if index > 0:  # the first parts stay edited
            note, post = f"parts {index + 1}–{len(self.parts)} sent anew: {note}", PreviousPost.EDITED
        await in_db_thread(self._previous_recorded)(target, post, note, done=True)
        await self._delete(ref, editing[index:])

    async def _pin(self, target: ReminderRunTarget, ref: ChatRef) -> None:
        """Pin the group's new post (its first message), without a notification, and unpin the previous run's
        pinned one; recorded at once, so a resume or a retry never pins twice."""
        ref = self.moved.get(ref.id, ref)
        previous = (
            None if target.previous_post == PreviousPost.DELETED else await in_db_thread(self._previous_post)(target)
        )
        kept = previous is not None and previous.pinned and previous.message_ids[0] == target.message_ids[0]
        if not kept:  # an edited post pinned last time is pinned still
            await self._telegram_step(lambda: self.gateway.pin_message(ref, target.message_ids[0]))
        await in_db_thread(self._target_step_done)(target, "pinned")
        target.pinned = True
        if previous is not None and previous.pinned and previous.message_ids[0] not in (None, target.message_ids[0]):
            await self._telegram_step(lambda: self.gateway.pin_message(ref, previous.message_ids[0], unpin=True))

    async def _telegram_step(self, call) -> None:
        """A request beside the sends (delete, pin), paced like them; what Telegram refuses for this group
        (the post already gone, no right to pin), or trouble that outlasts the retries, is logged, not a failed
        group: the parts went out (or go out next), and a failed group would be offered for a second send."""
        try:
            await self._request(lambda _: call())
        except (TelegramError, _TargetFailed) as exc:
            logger.info("Reminder run #%s: %s", self.run.pk, exc)

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

    def _window_hold(self) -> None:
        """This group's slow mode puts its next part after the window's end: it waits for the next window at that
        part, and the other groups go on. Always raises."""
        self.window_held += 1
        raise _LeavePending

    async def _paced(self) -> None:
        """Before each message: the operator's Pause or Cancel and the account's rest or stop (as the database
        keeps them: Redis may have forgotten), then a token of the account's budget, and any FloodWait the account
        is serving. A halted bucket (the account rests, or its sending was stopped) stops the run, whichever
        process halted it; Redis away for longer than REDIS_PATIENCE_SECONDS pauses it."""
        await self.guard()
        if await in_db_thread(pace.account_send_check)(account=self.account, bucket=self.bucket):
            self._stop(StopReason.ACCOUNT_RESTING)
            raise _LeavePending
        left = self._window_left()
        if left is not None and left <= 0:
            self._stop_window()
            raise _LeavePending
        try:
            now = await self.interruptible(self.bucket.acquire(wait_at_most=left, taken=self._spent))
        except BucketHalted as exc:
            self._stop(StopReason.ACCOUNT_RESTING)
            raise _LeavePending from exc
        except BucketTooLate as exc:  # a FloodWait holds the account (this run's, another run's or a package send's)
            self._stop_window(
                f"{self.account} may send again only in {_duration(exc.wait)}, after it", account_held=True
            )
            raise _LeavePending from exc
        except BucketUnavailable as exc:
            self._stop(StopReason.BUDGET_OUTAGE, exc)
            raise _LeavePending from exc
        self.check()
        if now.changed:
            reason = "Clean sending raised the pace"
            await in_db_thread(pace.account_pace_record)(
                account=self.account, kind=PaceEventKind.RAISED, before=now.before_per_minute, pace=now, reason=reason
            )
        await self._serve_pause()

    async def _spent(self, taken: Pace) -> None:
        await in_db_thread(pace.account_send_spent)(account=self.account, pace=taken)

    async def _serve_pause(self) -> None:
        loop = asyncio.get_running_loop()
        while (delay := self.pause_until - loop.time()) > 0:
            await self.sleep(delay)
        if self._aborting:
            raise _LeavePending

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
            raise _TargetFailed(f"{exc.rpc}: {exc}" if exc.rpc else str(exc)) from exc
        self.messages_sent += 1
        target.message_ids[index] = sent.id
        target.album_ids += sent.album_ids
        return asyncio.get_running_loop().time()

    async def _request(
        self,
        call: Callable[[list[MediaHandle]], Awaitable[T]],
        *,
        media: Sequence[MediaFile] | None = None,
        paced: bool = True,
        mend: Callable[[TelegramError], Awaitable[bool]] | None = None,
    ) -> T:
        """One Telegram request of the run, under its retry rules; returns the call's answer. Before each try a
        token (`paced`; an upload takes none and only waits out the account's FloodWait). A FloodWait is waited
        out or stops the run (_flood); transient trouble is tried again, then this group fails; a restriction or
        a session gone stops the run (_account_trouble). A part's request (`media`, whose handles the call gets)
        whose handle expired uploads it once more, then this group fails. Any other refusal is raised as it is,
        for the caller to say what it means, unless `mend` mends it (a migrated group) and it is tried again."""
        retries = TransientRetries(settings.REMINDER_TRANSIENT_RETRIES)
        reuploaded = False
        while True:
            await (self._paced() if paced else self._serve_pause())
            handles = [await self._media(item) for item in media or ()]
            try:
                return await call(handles)
            except FileReferenceExpired as exc:
                if media is None:
                    raise
                if not handles or reuploaded:
                    raise _TargetFailed(f"The media keeps expiring ({exc.rpc}); not sent.") from exc
                reuploaded = True
                for item, handle in zip(media, handles, strict=True):
                    await self._media_forget(item, handle)
            except FloodWait as exc:
                await self._flood(exc)
            except TransientError as exc:
                try:
                    await retries.after(exc)
                except TransientError:
                    raise _TargetFailed(f"{exc} (after {retries.attempts} tries)") from exc
            except (AccountRestricted, AuthRequired) as exc:
                await self._account_trouble(exc)
            except TelegramError as exc:
                if mend is None or not await mend(exc):
                    raise

    async def _lower(self, kind: str, *, pause_seconds: float, reason: str) -> int:
        """Lower the account's shared pace and record why; returns its FloodWaits in the rest window."""
        return await in_db_thread(pace.account_pace_lower)(
            account=self.account, bucket=self.bucket, kind=kind, pause_seconds=pause_seconds, reason=reason
        )

    async def _account_trouble(self, exc: AccountRestricted | AuthRequired) -> None:
        """PEER_FLOOD rests the account; another restriction, or a session gone, stops it. Always raises."""
        if isinstance(exc, AccountRestricted) and exc.rpc == PEER_FLOOD:
            await self._peer_flood(exc)
        self._stop(StopReason.ACCOUNT_UNUSABLE, exc)
        raise _LeavePending from exc

    async def _peer_flood(self, exc: AccountRestricted) -> None:
        """Telegram thinks the account spams: rest it before it is banned; every run of it pauses."""
        if self.stop_reason == StopReason.ACCOUNT_RESTING:  # another group of this run got the same answer first
            raise _LeavePending from exc
        self._stop(StopReason.ACCOUNT_RESTING)
        reason = f"Telegram answered {PEER_FLOOD} during run #{self.run.pk}"
        await self._lower(PaceEventKind.PEER_FLOOD, pause_seconds=0, reason=reason)
        await in_db_thread(self._rest)(reason)
        raise _LeavePending from exc

    async def _flood(self, exc: FloodWait) -> None:
        """Slow mode holds back this group; any other FloodWait the whole account (every run and package send of
        it waits on its bucket). The window keeps counting. Either lowers the account's pace; too many FloodWaits
        in a while rest the account."""
        slow_mode = exc.rpc == SLOWMODE_WAIT
        past_window = self._window_closed_by(clock.now() + timedelta(seconds=exc.seconds))
        reason = f"Telegram asked to wait {exc.seconds} s ({exc.rpc})"
        if past_window and not slow_mode:
            # Before any await: the groups in flight must not send their next part meanwhile.
            why = f"Telegram asked {self.account} to wait {_duration(exc.seconds)} ({exc.rpc})"
            self._stop_window(why, account_held=True)
        kind = PaceEventKind.SLOWMODE_WAIT if slow_mode else PaceEventKind.FLOOD_WAIT
        recent = await self._lower(kind, pause_seconds=0 if slow_mode else exc.seconds, reason=reason)
        if not slow_mode and recent >= settings.ACCOUNT_REST_FLOOD_WAITS:
            await in_db_thread(self._rest)(f"{recent} FloodWaits within {settings.ACCOUNT_REST_WINDOW_MINUTES} minutes")
            self._stop(StopReason.ACCOUNT_RESTING)
            raise _LeavePending from exc
        if past_window and slow_mode:
            self._window_hold()
        if past_window:
            raise _LeavePending from exc
        if slow_mode:
            await self.sleep(exc.seconds)
            return
        logger.warning("Reminder run #%s: %s waits %s s (%s)", self.run.pk, self.account, exc.seconds, exc.rpc)
        loop = asyncio.get_running_loop()
        self.pause_until = max(self.pause_until, loop.time() + exc.seconds)

    async def _follow_migration(self, target: ReminderRunTarget, ref: ChatRef, refused: TelegramError) -> None:
        """A basic group refused the part: when Telegram upgraded it to a supergroup, the part goes there (and
        every reminder follows it); otherwise the group is gone, and the target fails saying which and why."""
        title = target.chat.title
        try:
            supergroup = await self.gateway.chat_migrated_to(ref)
        except TelegramError as exc:
            if exc.rpc == "CHANNEL_PRIVATE":
                raise _TargetFailed(
                    f"“{title}” was upgraded to a supergroup that {self.account} is not in ({exc.rpc}); add the "
                    "account there, or remove the group from the reminder."
                ) from refused
            raise _TargetFailed(
                f"{self.account} can no longer see “{title}” ({exc.rpc}): it was removed from the group, or the group "
                "was deleted; add it again, or remove the group from the reminder."
            ) from refused
        if supergroup is None:
            raise _TargetFailed(
                f"“{title}” takes no more posts from {self.account} ({refused.rpc}) and did not become a supergroup: "
                "it was deleted or deactivated, or the account was removed; remove it from the reminder."
            ) from refused
        await in_db_thread(services.chat_migration_follow)(account=self.account, chat=target.chat, to=supergroup)
        self.moved[ref.id] = supergroup.ref

    # Media: uploaded once per run and reused for every group ------------------------------------------------
    async def _media(self, media: MediaFile) -> MediaHandle:
        async with self.upload_locks.setdefault(media.sha256, asyncio.Lock()):
            if media.sha256 not in self.handles:
                self.handles[media.sha256] = await self._upload(media)
            return self.handles[media.sha256]

    async def _media_forget(self, media: MediaFile, stale: MediaHandle) -> None:
        async with self.upload_locks[media.sha256]:
            if self.handles.get(media.sha256) is stale:  # another group may have re-uploaded it already
                del self.handles[media.sha256]

    async def _upload(self, media: MediaFile) -> MediaHandle:
        if self.temp_dir is None:
            self.temp_dir = Path(tempfile.mkdtemp(prefix=f"reminder-run-{self.run.pk}-"))
        path = await asyncio.to_thread(self._local_path, media)
        try:
            return await self._request(
                lambda _: self.gateway.upload_media(path=path, file_name=media.name, mime_type=media.mime_type),
                paced=False,
            )
        except FileTooLarge as exc:
            self._stop(StopReason.MEDIA_UNUSABLE, ValueError(f"{media.name} cannot be sent by {self.account}: {exc}"))
            raise _LeavePending from exc
        except TelegramError as exc:
            raise _TargetFailed(f"Uploading {media.name} failed: {exc}") from exc

    def _local_path(self, media: MediaFile) -> str:
        return media_local_path(media=media, temp_dir=self.temp_dir)


def part_build(*, part: dict, media: dict[int, MediaFile], premium: bool) -> Part:
    """One part as fired (text, media, caption, format, album) as Telegram takes it; FormatError when its text
    is one Telegram would refuse from this account."""
    album = tuple(media[media_id] for media_id in part.get("album", []) if media_id in media)
    spec = services.PartSpec(
        text=part["text"],
        media=media.get(part["media"]),
        caption=part["caption"],
        format=part.get("format", PLAIN),
        album=album,
    )
    return Part(formatted=services.part_formatted(part=spec, premium=premium), media=spec.media, album=album)


async def part_send(
    gateway: TelegramGateway,
    ref: ChatRef,
    part: Part,
    *,
    random_id: int,
    media: MediaHandle | None,
    album: list[MediaHandle],
    topic_id: int | None,
    options: dict,
) -> SentMessage:
    """One part to one chat, as every group gets it (and a test send shows it): an album in one request, else
    one message; silent and link preview as the reminder says."""
    silent = bool(options.get("silent"))
    if album:
        return await gateway.send_album(
            ref,
            random_id=random_id,
            media=album,
            text=part.formatted.text,
            entities=part.formatted.entities,
            topic_id=topic_id,
            silent=silent,
        )
    return await gateway.send_message(
        ref,
        random_id=random_id,
        text=part.formatted.text,
        entities=part.formatted.entities,
        media=media,
        topic_id=topic_id,
        silent=silent,
        link_preview=options.get("link_preview", True),
    )


def media_local_path(*, media: MediaFile, temp_dir: Path) -> str:
    """A file on disk for the upload: the stored file itself, or a copy from a remote storage into temp_dir."""
    try:
        return media.file.path
    except NotImplementedError:
        path = temp_dir / f"{media.pk}-{Path(media.name).name}"
        with media.file.open("rb") as source, open(path, "wb") as copy:
            shutil.copyfileobj(source, copy)
        return str(path)


def _duration(seconds: float) -> str:
    """A wait in the operator's words: 45 s, 12 min, 3 h 05 min."""
    seconds = round(seconds)
    if seconds < 120:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"
