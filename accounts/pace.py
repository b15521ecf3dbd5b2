"""An account's send pace, its rests (quarantine) and the operator's stop switch: the writes.

The live pace is the account's Redis bucket (core.ratelimit), shared by every worker; what Telegram said and
what the pace became is recorded here (AccountPaceEvent, and the account's send_budget_* fields), so the pace
is visible, survives a flushed Redis, and makes the account's health. A rest or a stop halts the bucket, so
every worker of the account stops at its next token, whatever process it is in.
"""

import logging
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import AccountPaceEvent, AccountRest, AccountSendMinute, PaceEventKind, TelegramAccount
from accounts.signals import account_rest_ended, account_rest_started, account_sending_changed
from core.errors import OperatorError
from core.formatting import format_moment
from core.ratelimit import Pace, TokenBucket, account_send_bucket

logger = logging.getLogger(__name__)

STOPPED_UNTIL = timedelta(days=3650)  # the operator's stop has no end of its own; the bucket needs one


class AccountNotResting(OperatorError):
    """A rest action on an account that is not resting."""


def account_bucket(*, account: TelegramAccount) -> TokenBucket:
    """The account's shared send bucket, starting from the recorded pace, rest and stop when Redis holds none."""
    return account_send_bucket(
        account_id=account.pk,
        start_per_minute=account.send_budget_per_minute,
        start_halt=_halt_until(account),
        start_spent=_spent(account),
    )


def account_send_check(*, account: TelegramAccount, bucket: TokenBucket) -> str:
    """Before each message: why the account may not send (its rest or stop, as the database keeps them: Redis may
    have forgotten them), or "". The bucket learns the recorded pace, halt and last spend, should Redis have lost
    its own."""
    account.refresh_from_db(
        fields=["sending_stopped", "resting_until", "rest_reason", "send_budget_per_minute", "send_spent_until"]
    )
    bucket.remember(start_per_minute=account.send_budget_per_minute, halt=_halt_until(account), spent=_spent(account))
    return account_send_problem(account=account)


def account_send_spent(*, account: TelegramAccount, pace: Pace) -> None:
    """After a token is taken, before its message goes: record when it is due, so a bucket Redis forgets starts
    empty from there (never with a fresh burst on top of the tokens already handed out)."""
    _spent_until(account, datetime.fromtimestamp(pace.due, UTC))


def _spent_until(account: TelegramAccount, due: datetime) -> None:
    TelegramAccount.objects.filter(pk=account.pk).filter(
        Q(send_spent_until__isnull=True) | Q(send_spent_until__lt=due)
    ).update(send_spent_until=due)


def _spent(account: TelegramAccount) -> float:
    return account.send_spent_until.timestamp() if account.send_spent_until else 0


def account_pace_record(
    *, account: TelegramAccount, kind: str, before: float, pace: Pace, wait_seconds: int = 0, reason: str = ""
) -> AccountPaceEvent:
    """Record what Telegram said (or that clean sending raised the pace) and the pace it left."""
    now = timezone.now()
    event = AccountPaceEvent.objects.create(
        account=account,
        at=now,
        kind=kind,
        wait_seconds=wait_seconds,
        budget_before=before,
        budget_after=pace.per_minute,
        reason=reason[:255],
    )
    if pace.changed:
        why = reason or PaceEventKind(kind).label
        TelegramAccount.objects.filter(pk=account.pk).update(
            send_budget_per_minute=pace.per_minute, send_budget_reason=why[:255], send_budget_changed_at=now
        )
        account.send_budget_per_minute, account.send_budget_reason, account.send_budget_changed_at = (
            pace.per_minute,
            why[:255],
            now,
        )
        logger.info("%s: send pace %.1f → %.1f a minute (%s)", account, before, pace.per_minute, why)
    return event


def account_pace_lower(
    *, account: TelegramAccount, bucket: TokenBucket, kind: str, pause_seconds: float, reason: str
) -> int:
    """Telegram said "too fast" to any sender of the account (a FloodWait, slow mode, PEER_FLOOD): its shared pace
    is lowered, every sender of it waits `pause_seconds`, and why is recorded. Returns its FloodWaits in the rest
    window, which decide a rest."""
    lowered = bucket.lower(
        factor=settings.REMINDER_PACE_LOWER_PERCENT / 100,
        floor_per_minute=settings.REMINDER_PACE_FLOOR_PER_MINUTE,
        pause_seconds=pause_seconds,
        recover_to=settings.REMINDER_PACE_RECOVER_PERCENT / 100,
    )
    if pause_seconds:  # kept as a spend up to the wait's end: a bucket Redis forgot still waits it out
        _spent_until(account, timezone.now() + timedelta(seconds=pause_seconds))
    account_pace_record(
        account=account,
        kind=kind,
        before=lowered.before_per_minute,
        pace=lowered,
        wait_seconds=round(pause_seconds),
        reason=reason,
    )
    return account_flood_waits_recent(account=account)


def account_flood_waits_recent(*, account: TelegramAccount) -> int:
    """FloodWaits (and PEER_FLOODs) in the last ACCOUNT_REST_WINDOW_MINUTES: what decides a rest."""
    since = timezone.now() - timedelta(minutes=settings.ACCOUNT_REST_WINDOW_MINUTES)
    return AccountPaceEvent.objects.filter(
        account=account, kind__in=[PaceEventKind.FLOOD_WAIT, PaceEventKind.PEER_FLOOD], at__gte=since
    ).count()


def account_sends_tally(*, account: TelegramAccount, sends: int) -> None:
    """Count messages sent in the current minute; minutes older than two days are dropped on the way."""
    if sends <= 0:
        return
    now = timezone.now()
    minute = now.replace(second=0, microsecond=0)
    updated = AccountSendMinute.objects.filter(account=account, minute=minute).update(sends=F("sends") + sends)
    if not updated:
        _, created = AccountSendMinute.objects.get_or_create(account=account, minute=minute, defaults={"sends": sends})
        if not created:  # another process made the row meanwhile
            AccountSendMinute.objects.filter(account=account, minute=minute).update(sends=F("sends") + sends)
        AccountSendMinute.objects.filter(account=account, minute__lt=now - timedelta(days=2)).delete()


def _halt_until(account: TelegramAccount) -> float:
    """Until when the bucket hands out nothing: the stop switch, else the rest, else not at all (0)."""
    if account.sending_stopped:
        return (timezone.now() + STOPPED_UNTIL).timestamp()
    if account.is_resting:
        return account.resting_until.timestamp()
    return 0


def account_rest(*, account: TelegramAccount, reason: str, hours: int | None = None) -> TelegramAccount:
    """Quarantine: nothing is sent or ingested through the account until the rest ends. A rest already running
    is lengthened, never shortened."""
    now = timezone.now()
    until = now + timedelta(hours=hours or settings.ACCOUNT_REST_HOURS)
    with transaction.atomic():
        account = TelegramAccount.objects.select_for_update().get(pk=account.pk)
        current = account.rests.filter(ended_at__isnull=True).first()
        if current is not None and current.until >= until:
            return account
        if current is not None:
            current.until, current.reason = until, reason[:255]
            current.save(update_fields=["until", "reason"])
        else:
            AccountRest.objects.create(account=account, started_at=now, until=until, reason=reason[:255])
        account.resting_until, account.rest_reason, account.rest_resumes_runs = until, reason[:255], True
        account.save(update_fields=["resting_until", "rest_reason", "rest_resumes_runs"])
    account_bucket(account=account).halt(until=_halt_until(account))
    logger.warning("%s rests until %s: %s", account, until, reason)
    account_rest_started.send(sender=TelegramAccount, account=account, reason=reason)
    return account


def account_rest_end(*, account: TelegramAccount, by: str = "time") -> TelegramAccount:
    """End the account's rest (its time came, or the operator ended it early); the runs it paused resume
    unless the operator said to keep them paused."""
    now = timezone.now()
    with transaction.atomic():
        account = TelegramAccount.objects.select_for_update().get(pk=account.pk)
        account.rests.filter(ended_at__isnull=True).update(ended_at=now, ended_by=by)
        resume_runs = account.rest_resumes_runs
        account.resting_until, account.rest_reason, account.rest_resumes_runs = None, "", True
        account.save(update_fields=["resting_until", "rest_reason", "rest_resumes_runs"])
    account_bucket(account=account).halt(until=_halt_until(account))
    account_rest_ended.send(sender=TelegramAccount, account=account, resume_runs=resume_runs)
    return account


def _resting(account: TelegramAccount) -> None:
    if not account.is_resting:
        raise AccountNotResting(f"{account} is not resting.")


def account_rest_end_now(*, account: TelegramAccount) -> TelegramAccount:
    """The operator ends the account's rest early."""
    _resting(account)
    return account_rest_end(account=account, by="operator")


def account_rest_keep_runs_paused(*, account: TelegramAccount) -> TelegramAccount:
    """The operator says otherwise: runs paused by this rest stay paused when it ends."""
    _resting(account)
    TelegramAccount.objects.filter(pk=account.pk).update(rest_resumes_runs=False)
    account.rest_resumes_runs = False
    return account


def account_rests_end() -> list[int]:
    """End the rests that ran out (beat, every minute)."""
    ended = []
    for account in TelegramAccount.objects.filter(resting_until__lte=timezone.now()):
        account_rest_end(account=account, by="time")
        ended.append(account.pk)
    return ended


def account_sending_set(*, account: TelegramAccount, stopped: bool) -> TelegramAccount:
    """The operator's switch: stop every send of the account now (every worker at its next message), or allow
    sending again."""
    TelegramAccount.objects.filter(pk=account.pk).update(sending_stopped=stopped)
    account.sending_stopped = stopped
    account_bucket(account=account).halt(until=_halt_until(account))
    account_sending_changed.send(sender=TelegramAccount, account=account, stopped=stopped)
    return account


def account_send_problem(*, account: TelegramAccount) -> str:
    """Why the account may not send now, in the operator's words; empty when it may."""
    if account.sending_stopped:
        return f"Sending is stopped for {account} by the operator; allow sending on the Accounts page, then Resume."
    if account.is_resting:
        until = format_moment(account.resting_until, dated=True)
        return f"{account} is resting until {until} ({account.rest_reason})."
    return ""
