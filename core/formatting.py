"""How durations and times read for the operator, in pages, alerts and notifications alike."""

from datetime import datetime, tzinfo

from django.utils import timezone

from core import clock


def format_duration(seconds: float | None) -> str:
    """Seconds as the operator reads them: "45 s", "12 min", "2 h 05 min"; "—" for none."""
    if seconds is None:
        return "—"
    seconds = int(seconds)
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{seconds // 60} min"
    if seconds < 172800:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    return f"{seconds // 86400} d {seconds % 86400 // 3600} h"


def plural(count: int, word: str) -> str:
    """ "1 group", "2,000 groups"."""
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def format_moment(
    moment: datetime,
    *,
    now: datetime | None = None,
    zone: tzinfo | None = None,
    seconds: bool = False,
    short: bool = False,
    dated: bool = False,
) -> str:
    """A time as the operator reads it, always with its zone: "14:05 UTC" today, "25 Nov, 14:05 UTC" another day,
    "25 Nov 2025, 14:05 UTC" another year. The zone is the console's (UTC) unless one is given (a reminder's):
    "10:00 +08 (Asia/Kuala_Lumpur)", or "10:00 +08" when `short` (rows of a list whose page names the zone).
    `dated`: always with its date and year, for words kept and read later (errors, notifications, the audit)."""
    zone = zone or timezone.get_default_timezone()
    local, today = moment.astimezone(zone), (now or clock.now()).astimezone(zone)
    utc = str(zone) in ("UTC", "Etc/UTC")
    name = local.tzname() if utc or short else f"{local.tzname()} ({zone})"
    clock_time = f"{local:%H:%M:%S}" if seconds else f"{local:%H:%M}"
    if local.date() == today.date() and not dated:
        return f"{clock_time} {name}"
    if local.year == today.year and not dated:
        return f"{local.day} {local:%b}, {clock_time} {name}"
    return f"{local.day} {local:%b %Y}, {clock_time} {name}"


def format_relative(moment: datetime, *, now: datetime | None = None) -> str:
    """ "in 3 min", "2 h 05 min ago", "now" under a minute either way."""
    seconds = (moment - (now or clock.now())).total_seconds()
    if abs(seconds) < 60:
        return "now"
    span = format_duration(abs(seconds))
    return f"in {span}" if seconds > 0 else f"{span} ago"
