import zoneinfo
from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.html import format_html
from django.utils.timesince import timesince

from core.formatting import format_duration, format_moment, format_relative
from core.sizes import size_text

register = template.Library()


@register.filter
def duration(seconds) -> str:
    return format_duration(None if seconds in (None, "") else float(seconds))


@register.filter
def size(value: int | None) -> str:
    """Bytes as every page, the API's words and the bot write them: "651.6 KB" (core.sizes.size_text)."""
    return "" if value in (None, "") else size_text(int(value))


@register.filter
def ago(moment: datetime | None) -> str:
    """ "just now" under a minute, else "3 minutes ago", "2 days, 4 hours ago"."""
    if moment is None:
        return ""
    if (timezone.now() - moment).total_seconds() < 60:
        return "just now"
    return f"{timesince(moment)} ago"


@register.filter
def moment(value: datetime | None, zone: str = ""):
    """<time> with the zone said, the date when not today, and how far away it is ("in 3 min") beside it.
    `zone`: a reminder's time zone for its times; the console's (UTC) otherwise."""
    if value is None:
        return ""
    tz = zoneinfo.ZoneInfo(zone) if zone else None
    return format_html(
        '<time datetime="{}" title="{}">{}</time> <span class="muted">({})</span>',
        value.isoformat(),
        format_moment(value, zone=timezone.get_default_timezone()),
        format_moment(value, zone=tz),
        format_relative(value),
    )


@register.filter
def at(value: datetime | None, arg: str = "") -> str:
    """A time, said with its zone: "14:05 UTC" today, else with its date. `arg`: "s" adds the seconds; a time zone
    name (a reminder's) says it there instead of in the console's zone, by its offset or abbreviation ("+08")."""
    if value is None:
        return ""
    if arg and arg != "s":
        return format_moment(value, zone=zoneinfo.ZoneInfo(arg), short=True)
    return format_moment(value, seconds=arg == "s")
