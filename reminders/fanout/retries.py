"""The retry rules of every Telegram request of a run (a part sent or edited, a post deleted or pinned, a media
uploaded): `Retries._request`; each caller says only what a refusal means for it. Before each try the pace
(a token of the account's budget, any FloodWait it serves); a FloodWait, SLOWMODE_WAIT or PEER_FLOOD lowers the
account's shared budget and may rest it. Media are uploaded once per run and reused for every group."""

import asyncio
import logging
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from datetime import timedelta
from pathlib import Path
from typing import TypeVar

from django.conf import settings

from accounts import pace
from accounts.models import PaceEventKind
from core import clock
from core.db_thread import in_db_thread
from core.ratelimit import BucketHalted, BucketTooLate, BucketUnavailable, Pace
from reminders.fanout.parts import media_local_path
from reminders.fanout.stops import LeavePending, StopReason, TargetFailed, duration
from reminders.models import MediaFile
from telegram.errors import (
    AccountRestricted,
    AuthRequired,
    FileReferenceExpired,
    FileTooLarge,
    FloodWait,
    TelegramError,
    TransientError,
)
from telegram.records import MediaHandle
from telegram.retry import TransientRetries

logger = logging.getLogger(__name__)
T = TypeVar("T")

SLOWMODE_WAIT = "SLOWMODE_WAIT"
PEER_FLOOD = "PEER_FLOOD"


class Retries:
    """The retry rules and the pace of a run's requests (a part of `Fanout`)."""

    def _rest(self, reason: str) -> None:
        pace.account_rest(account=self.account, reason=reason)  # every run of it pauses (reminders.apps)

    async def _paced(self) -> None:
        """Before each message: the operator's Pause or Cancel and the account's rest or stop (as the database
        keeps them: Redis may have forgotten), then a token of the account's budget, and any FloodWait the account
        is serving. A halted bucket (the account rests, or its sending was stopped) stops the run, whichever
        process halted it; Redis away for longer than REDIS_PATIENCE_SECONDS pauses it."""
        await self.guard()
        if await in_db_thread(pace.account_send_check)(account=self.account, bucket=self.bucket):
            self._stop(StopReason.ACCOUNT_RESTING)
            raise LeavePending
        left = self._window_left()
        if left is not None and left <= 0:
            self._stop_window()
            raise LeavePending
        try:
            now = await self.interruptible(self.bucket.acquire(wait_at_most=left, taken=self._spent))
        except BucketHalted as exc:
            self._stop(StopReason.ACCOUNT_RESTING)
            raise LeavePending from exc
        except BucketTooLate as exc:  # a FloodWait holds the account (this run's, another run's or a package send's)
            self._stop_window(
                f"{self.account} may send again only in {duration(exc.wait)}, after it", account_held=True
            )
            raise LeavePending from exc
        except BucketUnavailable as exc:
            self._stop(StopReason.BUDGET_OUTAGE, exc)
            raise LeavePending from exc
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
            raise LeavePending

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
                    raise TargetFailed(f"The media keeps expiring ({exc.rpc}); not sent.") from exc
                reuploaded = True
                for item, handle in zip(media, handles, strict=True):
                    await self._media_forget(item, handle)
            except FloodWait as exc:
                await self._flood(exc)
            except TransientError as exc:
                try:
                    await retries.after(exc)
                except TransientError:
                    raise TargetFailed(f"{exc} (after {retries.attempts} tries)") from exc
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
        raise LeavePending from exc

    async def _peer_flood(self, exc: AccountRestricted) -> None:
        """Telegram thinks the account spams: rest it before it is banned; every run of it pauses."""
        if self.stop_reason == StopReason.ACCOUNT_RESTING:  # another group of this run got the same answer first
            raise LeavePending from exc
        self._stop(StopReason.ACCOUNT_RESTING)
        reason = f"Telegram answered {PEER_FLOOD} during run #{self.run.pk}"
        await self._lower(PaceEventKind.PEER_FLOOD, pause_seconds=0, reason=reason)
        await in_db_thread(self._rest)(reason)
        raise LeavePending from exc

    async def _flood(self, exc: FloodWait) -> None:
        """Slow mode holds back this group; any other FloodWait the whole account (every run and package send of
        it waits on its bucket). The window keeps counting. Either lowers the account's pace; too many FloodWaits
        in a while rest the account."""
        slow_mode = exc.rpc == SLOWMODE_WAIT
        past_window = self._window_closed_by(clock.now() + timedelta(seconds=exc.seconds))
        reason = f"Telegram asked to wait {exc.seconds} s ({exc.rpc})"
        if past_window and not slow_mode:
            # Before any await: the groups in flight must not send their next part meanwhile.
            why = f"Telegram asked {self.account} to wait {duration(exc.seconds)} ({exc.rpc})"
            self._stop_window(why, account_held=True)
        kind = PaceEventKind.SLOWMODE_WAIT if slow_mode else PaceEventKind.FLOOD_WAIT
        recent = await self._lower(kind, pause_seconds=0 if slow_mode else exc.seconds, reason=reason)
        if not slow_mode and recent >= settings.ACCOUNT_REST_FLOOD_WAITS:
            await in_db_thread(self._rest)(f"{recent} FloodWaits within {settings.ACCOUNT_REST_WINDOW_MINUTES} minutes")
            self._stop(StopReason.ACCOUNT_RESTING)
            raise LeavePending from exc
        if past_window and slow_mode:
            self._window_hold()
        if past_window:
            raise LeavePending from exc
        if slow_mode:
            await self.sleep(exc.seconds)
            return
        logger.warning("Reminder run #%s: %s waits %s s (%s)", self.run.pk, self.account, exc.seconds, exc.rpc)
        loop = asyncio.get_running_loop()
        self.pause_until = max(self.pause_until, loop.time() + exc.seconds)

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
            raise LeavePending from exc
        except TelegramError as exc:
            raise TargetFailed(f"Uploading {media.name} failed: {exc}") from exc

    def _local_path(self, media: MediaFile) -> str:
        return media_local_path(media=media, temp_dir=self.temp_dir)
