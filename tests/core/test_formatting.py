"""The one way a time is written: with its zone, its date when not today, and its date always when kept to be read
later (errors, notifications)."""

import zoneinfo
from datetime import UTC, datetime

from core.formatting import format_moment

NOW = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)


def test_a_time_says_its_zone_and_its_date_when_not_today():
    assert format_moment(datetime(2026, 11, 28, 14, 5, tzinfo=UTC), now=NOW) == "14:05 UTC"
    assert format_moment(datetime(2026, 11, 25, 14, 5, tzinfo=UTC), now=NOW) == "25 Nov, 14:05 UTC"
    assert format_moment(datetime(2025, 11, 25, 14, 5, tzinfo=UTC), now=NOW) == "25 Nov 2025, 14:05 UTC"
    kl = zoneinfo.ZoneInfo("Asia/Kuala_Lumpur")
    assert format_moment(datetime(2026, 11, 28, 2, 0, tzinfo=UTC), now=NOW, zone=kl) == "10:00 +08 (Asia/Kuala_Lumpur)"


def test_words_kept_for_later_say_the_whole_date_even_today():
    moment = datetime(2026, 11, 28, 14, 5, 9, tzinfo=UTC)
    assert format_moment(moment, now=NOW, dated=True) == "28 Nov 2026, 14:05 UTC"
    assert format_moment(moment, now=NOW, dated=True, seconds=True) == "28 Nov 2026, 14:05:09 UTC"
