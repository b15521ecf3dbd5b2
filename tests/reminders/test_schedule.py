"""Delivery windows in the reminder's zone, DST days included; zones and crontabs."""

from datetime import UTC, date, datetime

import pytest

from reminders.schedule import (
    DeliveryWindow,
    crontab_fields,
    crontab_parse,
    local_hm,
    window_hours_errors,
    zone,
)

BERLIN = zone("Europe/Berlin")
NEW_YORK = zone("America/New_York")


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=UTC)


def window_on(day: date, *, tz, start_hour: int, end_hour: int):
    return DeliveryWindow(tz=tz, start_hour=start_hour, end_hour=end_hour).opening_on(day)


def window_containing(moment: datetime, *, tz, start_hour: int, end_hour: int):
    return DeliveryWindow(tz=tz, start_hour=start_hour, end_hour=end_hour).containing(moment)


def window_next_start(moment: datetime, *, tz, start_hour: int, end_hour: int):
    return DeliveryWindow(tz=tz, start_hour=start_hour, end_hour=end_hour).next_start(moment)


def test_a_window_is_wall_clock_hours_on_both_sides_of_a_dst_change():
    winter = window_on(date(2026, 3, 28), tz=BERLIN, start_hour=9, end_hour=18)
    summer = window_on(date(2026, 3, 29), tz=BERLIN, start_hour=9, end_hour=18)  # clocks go forward at 02:00

    assert (winter.start_at, winter.end_at) == (utc(2026, 3, 28, 8), utc(2026, 3, 28, 17))
    assert (summer.start_at, summer.end_at) == (utc(2026, 3, 29, 7), utc(2026, 3, 29, 16))


def test_an_all_day_window_never_closes_not_even_at_midnight_or_on_dst_days():
    for moment in (utc(2026, 3, 28, 23), utc(2026, 3, 29, 1, 30), utc(2026, 10, 25, 0, 59), utc(2026, 10, 25, 23)):
        window = window_containing(moment, tz=BERLIN, start_hour=0, end_hour=24)
        assert window is not None and window.end_at is None, moment


def test_an_overnight_window_opens_one_evening_and_closes_the_next_morning():
    window = window_on(date(2026, 11, 25), tz=BERLIN, start_hour=22, end_hour=6)

    assert (window.start_at, window.end_at) == (utc(2026, 11, 25, 21), utc(2026, 11, 26, 5))
    assert window_containing(utc(2026, 11, 26, 3), tz=BERLIN, start_hour=22, end_hour=6) == window, "after midnight"
    assert window_containing(utc(2026, 11, 26, 5), tz=BERLIN, start_hour=22, end_hour=6) is None, "06:00 is closed"
    assert window_containing(utc(2026, 11, 26, 12), tz=BERLIN, start_hour=22, end_hour=6) is None
    assert window_next_start(utc(2026, 11, 26, 5), tz=BERLIN, start_hour=22, end_hour=6) == utc(2026, 11, 26, 21)
    assert window_next_start(utc(2026, 11, 26, 2), tz=BERLIN, start_hour=22, end_hour=6) == utc(2026, 11, 26, 21)


def test_an_overnight_window_across_a_dst_change_keeps_its_wall_clock_hours():
    # Berlin: clocks go back at 03:00 on 25 Oct 2026 (the night is 9 hours long), forward at 02:00 on 29 Mar
    autumn = window_on(date(2026, 10, 24), tz=BERLIN, start_hour=22, end_hour=6)
    spring = window_on(date(2026, 3, 28), tz=BERLIN, start_hour=22, end_hour=6)

    assert (autumn.start_at, autumn.end_at) == (utc(2026, 10, 24, 20), utc(2026, 10, 25, 5))
    assert (spring.start_at, spring.end_at) == (utc(2026, 3, 28, 21), utc(2026, 3, 29, 4))
    assert local_hm(autumn.end_at, BERLIN) == local_hm(spring.end_at, BERLIN) == "06:00"


def test_a_crontab_hour_after_midnight_is_inside_an_overnight_window():
    overnight = DeliveryWindow(tz=BERLIN, start_hour=22, end_hour=6)
    assert overnight.fires_inside({23}) and overnight.fires_inside({4})
    assert not overnight.fires_inside({6, 12, 21})
    assert DeliveryWindow(tz=BERLIN, start_hour=0, end_hour=24).fires_inside({0})


def test_window_hours_overnight_is_accepted_the_same_hour_twice_is_not():
    assert window_hours_errors(22, 6) == {}
    assert window_hours_errors(0, 24) == {}
    assert "00:00–24:00" in window_hours_errors(9, 9)["window_end_hour"]
    assert set(window_hours_errors(24, 0)) == {"window_start_hour", "window_end_hour"}


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
