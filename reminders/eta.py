"""How long a fan-out takes at the configured pace, when it starts, and whether it fits in its delivery window."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from reminders.schedule import DeliveryWindow

FITS = "Fits in window"
LIKELY_TO_PAUSE = "Likely to pause — widen the window or split into smaller runs"
WAITS = "Outside the delivery window — it waits for the window to open"
WAITS_THEN_PAUSE = "Waits for the window to open, then likely to pause — widen the window or split into smaller runs"
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
    starts_at: datetime  # fire_at inside the window; else when the window next opens (the run waits till then)
    finishes_at: datetime
    window_end_at: datetime | None  # the end of the window it sends in; None for an all-day window
    fits: bool
    rate_per_minute: int

    @property
    def waits(self) -> bool:
        return self.starts_at > self.fire_at

    @property
    def label(self) -> str:
        if self.waits:
            return WAITS if self.fits else WAITS_THEN_PAUSE
        return FITS if self.fits else LIKELY_TO_PAUSE


def eta_estimate(*, targets: int, parts: int, fire_at: datetime, window: DeliveryWindow, rate_per_minute: int) -> Eta:
    """What a run fired at `fire_at` does: it sends in the window open then, or waits for the next one."""
    minutes = eta_minutes(targets=targets, parts=parts, rate_per_minute=rate_per_minute)
    sending = window.sending_window(fire_at)
    starts_at = max(fire_at, sending.start_at)
    finishes_at = starts_at + timedelta(minutes=minutes)
    return Eta(
        duration_minutes=minutes,
        fire_at=fire_at,
        starts_at=starts_at,
        finishes_at=finishes_at,
        window_end_at=sending.end_at,
        fits=sending.end_at is None or finishes_at <= sending.end_at,
        rate_per_minute=rate_per_minute,
    )
