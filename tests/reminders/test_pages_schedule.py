"""What the pages say about a schedule: the next time a crontab fires (for the ETA pill) and the crontab in words."""

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import pytest

from reminders.presenters import duration_text, schedule_text
from reminders.selectors import reminder_next_fire_at

KL = ZoneInfo("Asia/Kuala_Lumpur")
BERLIN = ZoneInfo("Europe/Berlin")
SATURDAY_NOON_UTC = datetime(2026, 11, 28, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("crontab", "tz", "expected"),
    [
        ("0 9 * * 1-5", UTC, datetime(2026, 11, 30, 9, 0, tzinfo=UTC)),  # Saturday → Monday
        ("0 9 * * *", KL, datetime(2026, 11, 29, 1, 0, tzinfo=UTC)),  # 09:00 in Kuala Lumpur is 01:00 UTC
        ("30 12 * * 6", UTC, datetime(2026, 11, 28, 12, 30, tzinfo=UTC)),  # later the same day
        ("0 12 * * 6", UTC, datetime(2026, 12, 5, 12, 0, tzinfo=UTC)),  # not the very moment: a week on
        ("0 9 1 * 1", UTC, datetime(2027, 2, 1, 9, 0, tzinfo=UTC)),  # the 1st AND a Monday, as celery-beat reads it
        ("0 3 29 3 *", BERLIN, datetime(2027, 3, 29, 1, 0, tzinfo=UTC)),  # summer time: 03:00 CEST is 01:00 UTC
    ],
)
def test_the_next_fire_of_a_crontab_in_its_zone(crontab, tz, expected):
    assert reminder_next_fire_at(crontab=crontab, tz=tz, after=SATURDAY_NOON_UTC) == expected


def test_an_invalid_crontab_never_fires():
    assert reminder_next_fire_at(crontab="61 9 * * *", tz=UTC, after=SATURDAY_NOON_UTC) is None
    assert reminder_next_fire_at(crontab="0 9 31 2 *", tz=UTC, after=SATURDAY_NOON_UTC) is None


def test_schedules_in_words():
    assert schedule_text(crontab="0 9 * * 1-5", at=None, timezone="UTC") == "At 09:00, Monday through Friday"
    assert schedule_text(crontab="45 9 * * *", at=None, timezone="UTC") == "At 09:45, every day"
    assert schedule_text(crontab="0 9,15 * * *", at=None, timezone="UTC") == "At 09:00 and 15:00, every day"
    once = datetime(2026, 12, 1, 1, 30, tzinfo=UTC)
    assert schedule_text(crontab="", at=once, timezone="Asia/Kuala_Lumpur") == "Once, Tue 1 Dec 2026 at 09:30"
    assert schedule_text(crontab="", at=None, timezone="UTC") == "Manual: only when you press Send now"


def test_durations_in_hours_and_minutes():
    assert [duration_text(minutes) for minutes in (0, 1, 59, 60, 61, 1150)] == [
        "0 min",
        "1 min",
        "59 min",
        "1 h",
        "1 h 1 min",
        "19 h 10 min",
    ]
