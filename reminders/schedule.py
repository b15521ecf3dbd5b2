"""Time rules of reminders: IANA zones, crontab expressions and daily delivery windows.

Windows are built from local wall-clock hours with zoneinfo and compared in UTC: on a DST day
a 09:00–18:00 window is still 09:00–18:00 on the wall, however many real hours that is.
"""

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from zoneinfo import ZoneInfo, available_timezones

from celery.schedules import ParseException, crontab
from django_celery_beat.models import CrontabSchedule

CRONTAB_FIELDS = ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")
# Reminder.schedule_crontab's length; each field also fits its CrontabSchedule column.
CRONTAB_MAX_CHARS = 120
# A one-off send or an estimate further from now than this is a typo in the year (and near the years 1 and
# 9999 a local time has no UTC equivalent at all).
HORIZON = timedelta(days=3660)
HORIZON_TEXT = "10 years"


def within_horizon(moment: datetime, now: datetime) -> bool:
    return now - HORIZON <= moment <= now + HORIZON


@cache
def _zone_names() -> frozenset[str]:
    # the system's tz folder also holds files that are not a place's zone
    return frozenset(available_timezones()) - {"localtime", "posixrules", "Factory"}


def zone(name: str) -> ZoneInfo:
    """The zone of an IANA name (Asia/Kuala_Lumpur); ValueError for anything else."""
    if name not in _zone_names():
        raise ValueError(f"{name!r} is not an IANA time zone (e.g. Europe/Berlin, Asia/Kuala_Lumpur, UTC).")
    return ZoneInfo(name)


def crontab_parse(expression: str) -> crontab:
    """Five fields: minute hour day-of-month month day-of-week; ValueError says what is wrong."""
    if len(expression) > CRONTAB_MAX_CHARS:
        raise ValueError(f"A crontab is at most {CRONTAB_MAX_CHARS} characters, got {len(expression)}.")
    fields = expression.split()
    if len(fields) != len(CRONTAB_FIELDS):
        raise ValueError(f"A crontab has 5 fields (minute hour day month weekday), got {len(fields)}: {expression!r}.")
    for name, value in zip(CRONTAB_FIELDS, fields, strict=True):
        limit = CrontabSchedule._meta.get_field(name).max_length
        if len(value) > limit:
            raise ValueError(f"The {name.replace('_', ' ')} field of a crontab is at most {limit} characters.")
    try:
        return crontab(**dict(zip(CRONTAB_FIELDS, fields, strict=True)))
    # celery's ParseException ("negative numbers not supported") is not a ValueError
    except (ValueError, TypeError, ParseException) as exc:
        raise ValueError(f"{expression!r} is not a valid crontab: {exc}") from None


def crontab_fields(expression: str) -> dict[str, str]:
    """The five fields by name, as django-celery-beat's CrontabSchedule stores them."""
    crontab_parse(expression)
    return dict(zip(CRONTAB_FIELDS, expression.split(), strict=True))


@dataclass(frozen=True)
class Window:
    """One day's delivery window, as UTC instants."""

    start_at: datetime
    end_at: datetime

    def contains(self, moment: datetime) -> bool:
        return self.start_at <= moment < self.end_at


def window_on(day: date, *, tz: ZoneInfo, start_hour: int, end_hour: int) -> Window:
    """The window of a local calendar day; end hour 24 is the next midnight."""
    start = datetime.combine(day, time(start_hour), tzinfo=tz)
    if end_hour == 24:
        end = datetime.combine(day + timedelta(days=1), time(0), tzinfo=tz)
    else:
        end = datetime.combine(day, time(end_hour), tzinfo=tz)
    # Aware datetimes sharing a tzinfo compare by wall clock; in UTC they compare as instants.
    return Window(start_at=start.astimezone(UTC), end_at=end.astimezone(UTC))


def window_containing(moment: datetime, *, tz: ZoneInfo, start_hour: int, end_hour: int) -> Window | None:
    """Today's window (in tz) when `moment` is inside it, else None."""
    window = window_on(moment.astimezone(tz).date(), tz=tz, start_hour=start_hour, end_hour=end_hour)
    return window if window.contains(moment) else None


def window_next_start(moment: datetime, *, tz: ZoneInfo, start_hour: int, end_hour: int) -> datetime:
    """When the next window opens after `moment` (today's, if it has not opened yet)."""
    day = moment.astimezone(tz).date()
    window = window_on(day, tz=tz, start_hour=start_hour, end_hour=end_hour)
    if moment < window.start_at:
        return window.start_at
    return window_on(day + timedelta(days=1), tz=tz, start_hour=start_hour, end_hour=end_hour).start_at


def window_hours_errors(start_hour: int, end_hour: int) -> dict[str, str]:
    """The window rule: hours 0 ≤ start < end ≤ 24. What breaks it, by field; empty when it holds."""
    errors = {}
    if not 0 <= start_hour <= 23:
        errors["window_start_hour"] = f"window_start_hour must be an hour from 0 to 23, got {start_hour}."
    if not 1 <= end_hour <= 24:
        errors["window_end_hour"] = f"window_end_hour must be an hour from 1 to 24, got {end_hour}."
    if start_hour >= end_hour and "window_start_hour" not in errors:
        errors["window_start_hour"] = (
            "The delivery window must start before it ends: "
            f"window_start_hour {start_hour} ≥ window_end_hour {end_hour}."
        )
    return errors


def window_text(start_hour: int, end_hour: int) -> str:
    """09:00–18:00."""
    return f"{start_hour:02d}:00–{end_hour:02d}:00"


@dataclass(frozen=True)
class DeliveryWindow:
    """A reminder's daily window in its zone: the one place its zone and hours are read together."""

    tz: ZoneInfo
    start_hour: int
    end_hour: int

    @classmethod
    def of(cls, owner) -> "DeliveryWindow":
        """The window of anything with timezone, window_start_hour and window_end_hour (a Reminder, a spec);
        ValueError for a zone that is not IANA."""
        return cls(tz=zone(owner.timezone), start_hour=owner.window_start_hour, end_hour=owner.window_end_hour)

    @property
    def text(self) -> str:
        return window_text(self.start_hour, self.end_hour)

    def on(self, day: date) -> Window:
        return window_on(day, tz=self.tz, start_hour=self.start_hour, end_hour=self.end_hour)

    def today(self, moment: datetime) -> Window:
        """The window of moment's local day, open or not."""
        return self.on(moment.astimezone(self.tz).date())

    def containing(self, moment: datetime) -> Window | None:
        return window_containing(moment, tz=self.tz, start_hour=self.start_hour, end_hour=self.end_hour)

    def next_start(self, moment: datetime) -> datetime:
        return window_next_start(moment, tz=self.tz, start_hour=self.start_hour, end_hour=self.end_hour)

    def fires_inside(self, hours) -> bool:
        """Whether any of these local hours (a crontab's) is inside the window."""
        return any(self.start_hour <= hour < self.end_hour for hour in hours)

    def local_hm(self, moment: datetime) -> str:
        return local_hm(moment, self.tz)


def local_hm(moment: datetime, tz: ZoneInfo) -> str:
    """HH:MM on the wall clock of tz; a window ending at 24 reads 00:00."""
    return moment.astimezone(tz).strftime("%H:%M")
