"""How long a fan-out takes at the configured pace, and whether it fits in its delivery window."""

from dataclasses import dataclass
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from reminders.schedule import window_containing

FITS = "Fits in window"
LIKELY_TO_PAUSE = "Likely to pause — widen the window or split into smaller runs"
OUTSIDE_WINDOW = "Outside the delivery window — a run fired then fails at once"
MARGIN_PERCENT = 15  # FloodWaits, slow mode and jitter make real runs slower than the bare pace


def eta_minutes(*, targets: int, parts: int, rate_per_minute: int) -> int:
    """ceil(targets × parts / rate) minutes + 15 % (to the nearest minute), at least 1; nothing to send takes 0."""
    if rate_per_minute <= 0:
        raise ValueError(f"The send rate must be above 0 messages a minute, got {rate_per_minute}.")
    if targets < 0 or parts < 0:
        raise ValueError("Targets and parts cannot be negative.")
    messages = targets * parts
    if messages == 0:
        return 0
    minutes = -(-messages // rate_per_minute)
    return max(1, (minutes * (100 + MARGIN_PERCENT) + 50) // 100)


@dataclass(frozen=True)
class Eta:
    duration_minutes: int
    fire_at: datetime
    finishes_at: datetime
    window_end_at: datetime | None  # None when fire_at is outside the window
    fits: bool
    rate_per_minute: int

    @property
    def label(self) -> str:
        if self.window_end_at is None:
            return OUTSIDE_WINDOW
        return FITS if self.fits else LIKELY_TO_PAUSE


def eta_estimate(
    *,
    targets: int,
    parts: int,
    fire_at: datetime,
    tz: ZoneInfo,
    window_start_hour: int,
    window_end_hour: int,
    rate_per_minute: int,
) -> Eta:
    minutes = eta_minutes(targets=targets, parts=parts, rate_per_minute=rate_per_minute)
    finishes_at = fire_at + timedelta(minutes=minutes)
    window = window_containing(fire_at, tz=tz, start_hour=window_start_hour, end_hour=window_end_hour)
    return Eta(
        duration_minutes=minutes,
        fire_at=fire_at,
        finishes_at=finishes_at,
        window_end_at=window.end_at if window else None,
        fits=window is not None and finishes_at <= window.end_at,
        rate_per_minute=rate_per_minute,
    )
