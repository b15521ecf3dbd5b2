"""Why and when a run stops before every target was tried: the window, account trouble, too many failures; and
the run's ending status, summary and pause cause that follow from it."""

import asyncio
from collections import Counter
from enum import StrEnum

from django.conf import settings

from accounts.models import TelegramAccount
from core.models import RunStatus
from reminders import services
from reminders.models import PauseCause
from telegram.errors import AuthRequired


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


class LeavePending(Exception):
    """The run is stopping: this target goes back to `pending` (its random_ids make a later resend safe)."""


class TargetFailed(Exception):
    """This group only: the target is `failed` with this message."""


class Stops:
    """The stop rules of a run's fan-out (a part of `Fanout`)."""

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

    def _count_outcome(self, error: str) -> None:
        """More than the allowed share of the last groups failed: stop burning through the list."""
        self.recent.append(error)
        failed = sum(1 for outcome in self.recent if outcome)
        share = settings.REMINDER_ERROR_SHARE_PERCENT / 100
        if share and failed > share * self.recent.maxlen:
            self._stop(StopReason.TOO_MANY_FAILURES)

    def _window_hold(self) -> None:
        """This group's slow mode puts its next part after the window's end: it waits for the next window at that
        part, and the other groups go on. Always raises."""
        self.window_held += 1
        raise LeavePending


def duration(seconds: float) -> str:
    """A wait in the operator's words: 45 s, 12 min, 3 h 05 min."""
    seconds = round(seconds)
    if seconds < 120:
        return f"{seconds} s"
    minutes = round(seconds / 60)
    return f"{minutes // 60} h {minutes % 60:02d} min" if minutes >= 60 else f"{minutes} min"
