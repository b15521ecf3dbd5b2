"""Delivery windows in the reminder's zone, DST days included; zones and crontabs."""

from datetime import UTC, date, datetime

import pytest

from reminders.schedule import (
    crontab_fields,
    crontab_parse,
    local_hm,
    window_containing,
    window_next_start,
    window_on,
    zone,
)

BERLIN = zone("Europe/Berlin")
NEW_YORK = zone("America/New_York")


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def test_a_window_is_wall_clock_hours_on_both_sides_of_a_dst_change():
    winter = window_on(date(2026, 3, 28), tz=BERLIN, start_hour=9, end_hour=18)
    summer = window_on(date(2026, 3, 29), tz=BERLIN, start_hour=9, end_hour=18)  # clocks go forward at 02:00

    assert (winter.start_at, winter.end_at) == (utc(2026, 3, 28, 8), utc(2026, 3, 28, 17))
    assert (summer.start_at, summer.end_at) == (utc(2026, 3, 29, 7), utc(2026, 3, 29, 16))


def test_a_whole_day_window_lasts_23_or_25_hours_on_dst_days():
    spring = window_on(date(2026, 3, 29), tz=BERLIN, start_hour=0, end_hour=24)
    autumn = window_on(date(2026, 10, 25), tz=BERLIN, start_hour=0, end_hour=24)

    assert spring.end_at - spring.start_at == utc(2026, 1, 1, 23) - utc(2026, 1, 1)
    assert (autumn.end_at - autumn.start_at).total_seconds() == 25 * 3600
    assert autumn.end_at == utc(2026, 10, 25, 23), "end hour 24 is the next local midnight"


def test_a_start_hour_that_does_not_exist_that_day_opens_when_the_clock_jumps():
    window = window_on(date(2026, 3, 8), tz=NEW_YORK, start_hour=2, end_hour=4)  # 02:00–03:00 is skipped

    assert window.start_at == utc(2026, 3, 8, 7) and local_hm(window.start_at, NEW_YORK) == "03:00"
    assert window.end_at == utc(2026, 3, 8, 8)


def test_the_same_utc_moment_is_inside_in_winter_and_outside_in_summer():
    # 16:30 UTC is 17:30 in Berlin in winter (open) and 18:30 in summer (closed)
    assert window_containing(utc(2026, 3, 28, 16, 30), tz=BERLIN, start_hour=9, end_hour=18) is not None
    assert window_containing(utc(2026, 3, 29, 16, 30), tz=BERLIN, start_hour=9, end_hour=18) is None


def test_the_window_end_is_excluded_and_the_next_start_is_today_or_tomorrow():
    assert window_containing(utc(2026, 3, 28, 17), tz=BERLIN, start_hour=9, end_hour=18) is None
    assert window_next_start(utc(2026, 3, 28, 6), tz=BERLIN, start_hour=9, end_hour=18) == utc(2026, 3, 28, 8)
    assert window_next_start(utc(2026, 3, 28, 17), tz=BERLIN, start_hour=9, end_hour=18) == utc(2026, 3, 29, 7)


@pytest.mark.parametrize("name", ["Mars/Olympus", "", "utc+8", "localtime", "../etc/passwd"])
def test_only_iana_zone_names_are_accepted(name):
    with pytest.raises(ValueError, match="IANA"):
        zone(name)


def test_crontabs_are_checked_field_by_field():
    assert crontab_fields("0 9 * * 1-5") == {
        "minute": "0",
        "hour": "9",
        "day_of_month": "*",
        "month_of_year": "*",
        "day_of_week": "1-5",
    }
    assert crontab_parse("*/15 9-17 * * *").hour == set(range(9, 18))
    with pytest.raises(ValueError, match="5 fields"):
        crontab_parse("0 9 * *")
    with pytest.raises(ValueError, match="not a valid crontab"):
        crontab_parse("0 25 * * *")
