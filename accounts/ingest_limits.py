"""An account's ingestion hours and bandwidth cap: the settings (writes), what they say now (reads), and the
shared transfer budget.

The cap is a byte bucket in Redis (core.ratelimit) that every download and upload part of the account takes its
bytes from, in every worker process; PostgreSQL keeps the cap and when the last bytes taken were due, so a bucket
Redis forgot starts empty from there instead of with a fresh burst.
"""

from dataclasses import dataclass
from datetime import UTC, datetime

from django.core.exceptions import ValidationError
from django.db.models import Q

from accounts.models import TelegramAccount
from core import clock
from core.formatting import format_moment
from core.ratelimit import Pace, TokenBucket
from core.sizes import size_parse, size_text
from core.windows import DeliveryWindow, window_hours_errors, zone
from telegram.records import PART_SIZE

BUCKET_MEMORY_SECONDS = 3600


@dataclass(frozen=True)
class IngestLimits:
    """What an operator asks for, as validated: the hours, their zone, the cap (None: no cap)."""

    start_hour: int
    end_hour: int
    timezone: str
    bytes_per_second: int | None


@dataclass(frozen=True)
class IngestState:
    """What the Accounts page says of the account's ingestion: its hours, its cap, why it waits ("" if not)."""

    hours: str
    bandwidth: str
    waiting: str


def account_ingest_state(*, account: TelegramAccount) -> IngestState:
    return IngestState(
        hours=account_ingest_hours_text(account=account),
        bandwidth=account_bandwidth_text(account=account),
        waiting=account_ingest_wait(account=account),
    )


def account_ingest_window(*, account: TelegramAccount) -> DeliveryWindow:
    return DeliveryWindow(
        tz=zone(account.ingest_timezone), start_hour=account.ingest_start_hour, end_hour=account.ingest_end_hour
    )


def account_ingest_hours_text(*, account: TelegramAccount) -> str:
    """ "09:00–18:00 (Europe/Berlin)", or "all day"."""
    window = account_ingest_window(account=account)
    return "all day" if window.all_day else f"{window.text} ({account.ingest_timezone})"


def account_bandwidth_text(*, account: TelegramAccount) -> str:
    return f"{size_text(account.ingest_bytes_per_second)}/s" if account.ingest_bytes_per_second else "no cap"


def account_ingest_wait(*, account: TelegramAccount, at: datetime | None = None) -> str:
    """Why the account may not transfer for ingestion now (outside its hours), in the operator's words; "" when
    it may."""
    at = at or clock.now()
    window = account_ingest_window(account=account)
    if window.containing(at) is not None:
        return ""
    opens = window.next_start(at)
    return (
        f"Waiting for its ingestion hours: {account} transfers {window.text} ({account.ingest_timezone}); "
        f"ingestion goes on at {format_moment(opens, now=at, zone=window.tz)}."
    )


def account_ingest_opens_at(*, account: TelegramAccount, at: datetime | None = None) -> datetime | None:
    """When the account's ingestion hours next open; None while they are open."""
    at = at or clock.now()
    window = account_ingest_window(account=account)
    return None if window.containing(at) is not None else window.next_start(at)


def account_transfer_bucket(*, account: TelegramAccount) -> TokenBucket | None:
    """The account's shared byte budget (tokens are bytes; a burst of one part at most), or None without a cap."""
    if not account.ingest_bytes_per_second:
        return None
    spent = account.ingest_spent_until.timestamp() if account.ingest_spent_until else 0
    return TokenBucket(
        f"transfer:account:{account.pk}",
        per_minute=account.ingest_bytes_per_second * 60,
        capacity=PART_SIZE,
        memory_seconds=BUCKET_MEMORY_SECONDS,
        start_spent=spent,
    )


def account_transfer_spent(*, account: TelegramAccount, pace: Pace) -> None:
    """After bytes are taken: record when they are due (only ever later), for a bucket Redis forgets."""
    due = datetime.fromtimestamp(pace.due, UTC)
    TelegramAccount.objects.filter(pk=account.pk).filter(
        Q(ingest_spent_until__isnull=True) | Q(ingest_spent_until__lt=due)
    ).update(ingest_spent_until=due)


def ingest_limits_clean(*, start_hour, end_hour, timezone_name, bandwidth) -> IngestLimits:
    """The operator's input (hours as numbers, an IANA zone, a cap as "2 MB/s", a number of bytes a second, or
    empty for none), or ValidationError by field with a message saying what to write."""
    errors = {}
    try:
        start_hour, end_hour = int(start_hour), int(end_hour)
    except (TypeError, ValueError):
        errors["ingest_start_hour"] = "Hours are whole numbers: opens at 0–23, closes at 1–24 (0 and 24: all day)."
    else:
        for field, message in window_hours_errors(start_hour, end_hour).items():
            errors[field.replace("window_", "ingest_")] = message.replace("delivery window", "ingestion window")
    try:
        zone(str(timezone_name))
    except ValueError as exc:
        errors["ingest_timezone"] = str(exc)
    bytes_per_second = None
    if bandwidth not in (None, ""):
        try:
            bytes_per_second = bandwidth if isinstance(bandwidth, int) else size_parse(str(bandwidth))
            if bytes_per_second < 1:
                raise ValueError("A bandwidth cap is at least 1 byte a second; leave it empty for no cap.")
        except ValueError as exc:
            errors["ingest_bandwidth"] = str(exc)
    if errors:
        raise ValidationError(errors)
    return IngestLimits(start_hour, end_hour, str(timezone_name), bytes_per_second)


def account_ingest_limits_set(*, account: TelegramAccount, limits: IngestLimits) -> TelegramAccount:
    """Store the account's hours and cap; every worker follows the new cap at its next part (the bucket's ceiling
    moves), and the hours at its next part too."""
    account.ingest_start_hour, account.ingest_end_hour = limits.start_hour, limits.end_hour
    account.ingest_timezone, account.ingest_bytes_per_second = limits.timezone, limits.bytes_per_second
    account.save(update_fields=["ingest_start_hour", "ingest_end_hour", "ingest_timezone", "ingest_bytes_per_second"])
    return account
