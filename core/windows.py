"""Daily windows of wall-clock hours in an IANA zone: when reminders deliver, and when an account ingests.

Windows are built from local wall-clock hours with zoneinfo and compared in UTC (DeliveryWindow).
"""

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from zoneinfo import ZoneInfo, available_timezones


@cache
def _zone_names() -> frozenset[str]:
    # the system's tz folder also holds files that are not a place's zone
    return frozenset(available_timezones()) - {"localtime", "posixrules", "Factory"}


def zone(name: str) -> ZoneInfo:
    """The zone of an IANA name (Asia/Kuala_Lumpur); ValueError for anything else."""
    if name not in _zone_names():
        raise ValueError(f"{name!r} is not an IANA time zone (e.g. Europe/Berlin, Asia/Kuala_Lumpur, UTC).")
    return ZoneInfo(name)


ALL_DAY = (0, 24)


@dataclass(frozen=True)
class Window:
    """One opening of a delivery window, as UTC instants; an all-day window never closes (end_at None)."""

    start_at: datetime
    end_at: datetime | None

    def contains(self, moment: datetime) -> bool:
        return self.start_at <= moment and (self.end_at is None or moment < self.end_at)


def window_hours_errors(start_hour: int, end_hour: int) -> dict[str, str]:
    """The window rule: opens at 0–23, closes at 1–24, not at the hour it opens. A window that closes
    before it opens runs overnight (22 → 06); 0 → 24 is all day. What breaks it, by field; empty when it holds."""
    errors = {}
    if not 0 <= start_hour <= 23:
        errors["window_start_hour"] = f"The window opens at an hour from 0 to 23, got {start_hour}."
    if not 1 <= end_hour <= 24:
        errors["window_end_hour"] = f"The window closes at an hour from 1 to 24, got {end_hour}."
    if start_hour == end_hour and not errors:
        errors["window_end_hour"] = (
            f"The delivery window opens and closes at {start_hour:02d}:00; "
            "for all day choose 00:00–24:00 (opens at 0, closes at 24)."
        )
    return errors


def window_text(start_hour: int, end_hour: int) -> str:
    """09:00–18:00; 22:00–06:00 runs overnight."""
    return f"{start_hour:02d}:00–{end_hour:02d}:00"


def _local(day: date, hour: int, tz: ZoneInfo) -> datetime:
    """Hour on the wall clock of a local day, as a UTC instant; hour 24 is the next midnight. An hour the clock
    skips that day (spring forward) is the moment the clock jumps to."""
    if hour == 24:
        day, hour = day + timedelta(days=1), 0
    # Aware datetimes sharing a tzinfo compare by wall clock; in UTC they compare as instants.
    return datetime.combine(day, time(hour), tzinfo=tz).astimezone(UTC)


@dataclass(frozen=True)
class DeliveryWindow:
    """A reminder's daily window in its zone: the one home of the window rule.

    Hours are wall-clock hours of the zone, so on a DST day 09:00–18:00 is still 09:00–18:00 on the wall,
    however many real hours that is. start < end: a window inside each day. start > end: overnight, opening
    on one day and closing on the next (22:00–06:00). 00:00–24:00: always open, it never closes at midnight.
    """

    tz: ZoneInfo
    start_hour: int
    end_hour: int

    @classmethod
    def of(cls, owner) -> "DeliveryWindow":
        """The window of anything with timezone, window_start_hour and window_end_hour (a Reminder, a spec);
        ValueError for a zone that is not IANA."""
        return cls(tz=zone(owner.timezone), start_hour=owner.window_start_hour, end_hour=owner.window_end_hour)

    @property
    def all_day(self) -> bool:
        return (self.start_hour, self.end_hour) == ALL_DAY

    @property
    def overnight(self) -> bool:
        return self.start_hour > self.end_hour

    @property
    def text(self) -> str:
        return window_text(self.start_hour, self.end_hour)

    def opening_on(self, day: date) -> Window:
        """The window that opens on a local calendar day (an overnight one closes the next day)."""
        start = _local(day, self.start_hour, self.tz)
        if self.all_day:
            return Window(start_at=start, end_at=None)
        end_day = day + timedelta(days=1) if self.overnight else day
        return Window(start_at=start, end_at=_local(end_day, self.end_hour, self.tz))

    def containing(self, moment: datetime) -> Window | None:
        """The window open at `moment`, or None when it is closed."""
        day = moment.astimezone(self.tz).date()
        # an overnight window open after midnight opened the day before
        for opening_day in (day, day - timedelta(days=1)):
            window = self.opening_on(opening_day)
            if window.contains(moment):
                return window
        return None

    def next_start(self, moment: datetime) -> datetime:
        """When the window next opens after `moment` (today's, if it has not opened yet)."""
        day = moment.astimezone(self.tz).date()
        for offset in range(3):  # the local day may start before or after `moment`'s UTC day
            start = self.opening_on(day + timedelta(days=offset)).start_at
            if start > moment:
                return start
        raise AssertionError("a daily window opens within three days")

    def sending_window(self, moment: datetime) -> Window:
        """The window a run fired at `moment` sends in: the one open now, else the next one."""
        return self.containing(moment) or self.containing(self.next_start(moment))

    def fires_inside(self, hours) -> bool:
        """Whether any of these local hours (a crontab's) is inside the window."""
        if self.overnight:
            return any(hour >= self.start_hour or hour < self.end_hour for hour in hours)
        return any(self.start_hour <= hour < self.end_hour for hour in hours)

    def local_hm(self, moment: datetime) -> str:
        return local_hm(moment, self.tz)

    def local_dated(self, moment: datetime) -> str:
        return local_dated(moment, self.tz)

    def local_when(self, moment: datetime, now: datetime) -> str:
        """22:00 today, 06:00 tomorrow, or Sat 28 Nov 09:00: when `moment` is, as someone there would say it."""
        local, today = moment.astimezone(self.tz), now.astimezone(self.tz).date()
        if local.date() == today:
            return f"{local:%H:%M} today"
        if local.date() == today + timedelta(days=1):
            return f"{local:%H:%M} tomorrow"
        return f"{local:%a %-d %b} {local:%H:%M}"


def local_dated(moment: datetime, tz: ZoneInfo) -> str:
    """ "18:00 on Wed 25 Nov": a time written into a summary that is read later, so never "today" or "tomorrow"."""
    local = moment.astimezone(tz)
    return f"{local:%H:%M} on {local:%a} {local.day} {local:%b}"


def local_hm(moment: datetime, tz: ZoneInfo) -> str:
    """HH:MM on the wall clock of tz; a window ending at 24 reads 00:00."""
    return moment.astimezone(tz).strftime("%H:%M")
