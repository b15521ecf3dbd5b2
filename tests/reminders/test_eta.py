"""The ETA pill: ceil(targets × parts / rate) minutes + 15 %, at least 1, and whether it fits in the window."""

from datetime import UTC, datetime, timedelta

import pytest

from reminders.eta import FITS, LIKELY_TO_PAUSE, WAITS, WAITS_THEN_PAUSE, eta_estimate, eta_minutes
from reminders.schedule import DeliveryWindow, zone


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
        window=DeliveryWindow(tz=zone(tz), start_hour=start, end_hour=end),
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


def test_outside_the_window_it_starts_when_the_window_opens():
    before = estimate(10, fire_at=datetime(2026, 11, 24, 23, 0, tzinfo=UTC))  # 07:00, opens at 09:00
    assert before.starts_at == datetime(2026, 11, 25, 1, 0, tzinfo=UTC)
    assert before.finishes_at == before.starts_at + timedelta(minutes=before.duration_minutes)
    assert (before.waits, before.fits, before.label) == (True, True, WAITS)
    assert before.window_end_at == datetime(2026, 11, 25, 10, 0, tzinfo=UTC)

    late = estimate(1000, fire_at=datetime(2026, 11, 25, 11, 0, tzinfo=UTC), start=22, end=6)  # 19:00, opens 22:00
    assert (late.starts_at, late.window_end_at) == (
        datetime(2026, 11, 25, 14, 0, tzinfo=UTC),
        datetime(2026, 11, 25, 22, 0, tzinfo=UTC),
    )
    assert late.fits

    squeezed = estimate(2000, fire_at=datetime(2026, 11, 25, 11, 0, tzinfo=UTC), start=22, end=23)
    assert (squeezed.waits, squeezed.fits, squeezed.label) == (True, False, WAITS_THEN_PAUSE)


def test_an_all_day_window_always_fits():
    result = estimate(100_000, fire_at=datetime(2026, 11, 25, 15, 50, tzinfo=UTC), start=0, end=24)  # 23:50 local
    assert (result.waits, result.fits, result.window_end_at, result.label) == (False, True, None, FITS)


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
