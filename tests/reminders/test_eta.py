"""The ETA pill: ceil(targets × parts / rate) minutes + 15 %, at least 1, and whether it fits in the window."""

from datetime import UTC, datetime

import pytest

from reminders.eta import FITS, LIKELY_TO_PAUSE, OUTSIDE_WINDOW, eta_estimate, eta_minutes
from reminders.schedule import zone


@pytest.mark.parametrize(
    ("targets", "parts", "rate", "minutes"),
    [
        (0, 2, 40, 0),  # nothing to send
        (10, 0, 40, 0),
        (1, 1, 40, 1),  # a single message still shows a minute
        (40, 1, 40, 1),  # 1 minute + 15 % rounds to 1
        (41, 1, 40, 2),
        (1000, 2, 40, 58),  # 50 minutes + 15 % = 57.5
        (1000, 1, 40, 29),  # 25 + 3.75
        (999, 3, 40, 86),  # ceil(74.925) = 75, + 11.25
        (10_000, 1, 1, 11_500),
    ],
)
def test_minutes(targets, parts, rate, minutes):
    assert eta_minutes(targets=targets, parts=parts, rate_per_minute=rate) == minutes


@pytest.mark.parametrize("rate", [0, -40])
def test_a_rate_of_zero_or_less_is_an_error(rate):
    with pytest.raises(ValueError, match="above 0"):
        eta_minutes(targets=10, parts=1, rate_per_minute=rate)


def test_negative_counts_are_an_error():
    with pytest.raises(ValueError):
        eta_minutes(targets=-1, parts=1, rate_per_minute=40)


def estimate(targets, *, fire_at, start=9, end=18, tz="Asia/Kuala_Lumpur", parts=2):
    return eta_estimate(
        targets=targets,
        parts=parts,
        fire_at=fire_at,
        tz=zone(tz),
        window_start_hour=start,
        window_end_hour=end,
        rate_per_minute=40,
    )


def test_fits_when_it_finishes_before_the_window_closes():
    nine = datetime(2026, 11, 25, 1, 0, tzinfo=UTC)  # 09:00 in Kuala Lumpur
    small = estimate(1000, fire_at=nine)
    assert (small.duration_minutes, small.fits, small.label) == (58, True, FITS)
    assert small.window_end_at == datetime(2026, 11, 25, 10, 0, tzinfo=UTC)

    late = estimate(1000, fire_at=datetime(2026, 11, 25, 9, 10, tzinfo=UTC))  # 17:10, 50 minutes left
    assert (late.fits, late.label) == (False, LIKELY_TO_PAUSE)

    exact = estimate(1000, fire_at=datetime(2026, 11, 25, 9, 2, tzinfo=UTC))  # finishes at 18:00 sharp
    assert exact.finishes_at == exact.window_end_at and exact.fits


def test_outside_the_window_it_never_fits():
    before = estimate(10, fire_at=datetime(2026, 11, 24, 23, 0, tzinfo=UTC))  # 07:00
    assert (before.fits, before.window_end_at, before.label) == (False, None, OUTSIDE_WINDOW)


def test_nothing_to_send_fits_inside_the_window():
    nothing = estimate(0, fire_at=datetime(2026, 11, 25, 9, 59, tzinfo=UTC))
    assert (nothing.duration_minutes, nothing.fits) == (0, True)


def test_on_a_dst_day_the_window_end_is_the_wall_clock_hour():
    # 2026-03-29: Berlin moves to summer time; 15:30 UTC is 17:30 local, 30 minutes before 18:00
    result = estimate(
        10, parts=1, fire_at=datetime(2026, 3, 29, 15, 30, tzinfo=UTC), tz="Europe/Berlin", start=9, end=18
    )
    assert result.window_end_at == datetime(2026, 3, 29, 16, 0, tzinfo=UTC)
    assert result.fits
