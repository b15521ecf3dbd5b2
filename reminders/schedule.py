"""Time rules of reminders: IANA zones, crontab expressions and daily delivery windows.

The delivery window is core.windows' daily window (accounts' ingestion hours are one too); its names are
re-exported here for the reminder code that reads them from this module.
"""

from collections.abc import Iterator
from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

from celery.schedules import ParseException, crontab
from django_celery_beat.models import CrontabSchedule

from core.windows import (  # noqa: F401 (re-exported)
    ALL_DAY,
    DeliveryWindow,
    Window,
    local_dated,
    local_hm,
    window_hours_errors,
    window_text,
    zone,
)

CRONTAB_FIELDS = ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")
# Reminder.schedule_crontab's length; each field also fits its CrontabSchedule column.
CRONTAB_MAX_CHARS = 120
# A one-off send or an estimate further from now than this is a typo in the year (and near the years 1 and
# 9999 a local time has no UTC equivalent at all).
HORIZON = timedelta(days=3660)
HORIZON_TEXT = "10 years"


def within_horizon(moment: datetime, now: datetime) -> bool:
    return now - HORIZON <= moment <= now + HORIZON


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


# How far a crontab is searched for its next or last due time: a 29 February crontab fires once in four years.
CRONTAB_SEARCH_DAYS = 366 * 5


def crontab_fires_on(spec: crontab, day: date) -> bool:
    """Whether a crontab fires on a local day, as celery-beat reads it: day of month and weekday must both match."""
    weekday = (day.weekday() + 1) % 7  # cron counts from Sunday = 0
    return day.month in spec.month_of_year and day.day in spec.day_of_month and weekday in spec.day_of_week


def crontab_due_times_before(expression: str, tz: ZoneInfo, moment: datetime) -> Iterator[datetime]:
    """The crontab's due times at or before `moment`, latest first, as UTC instants (five years back at most)."""
    spec = crontab_parse(expression)
    start = moment.astimezone(tz).date()
    for offset in range(CRONTAB_SEARCH_DAYS):
        day = start - timedelta(days=offset)
        if not crontab_fires_on(spec, day):
            continue
        for hour in sorted(spec.hour, reverse=True):
            for minute in sorted(spec.minute, reverse=True):
                due = datetime.combine(day, time(hour, minute), tzinfo=tz).astimezone(UTC)
                if due <= moment:
                    yield due


def slots_before(owner, moment: datetime) -> Iterator[datetime]:
    """The slots of a reminder's schedule (its crontab's due times, or its one-off time) at or before `moment`,
    latest first; none for manual sends only. A slot is the identity of the run that serves it."""
    if owner.schedule_crontab:
        yield from crontab_due_times_before(owner.schedule_crontab, zone(owner.timezone), moment)
    elif owner.schedule_at is not None and owner.schedule_at <= moment:
        yield owner.schedule_at


def slot_due(owner, moment: datetime) -> datetime | None:
    """The slot a fire at `moment` serves: the latest due time not after it, whenever the fire comes."""
    return next(slots_before(owner, moment), None)
