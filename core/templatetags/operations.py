from datetime import datetime

from django import template
from django.utils import timezone
from django.utils.timesince import timesince

from core.formatting import format_duration

register = template.Library()


@register.filter
def duration(seconds) -> str:
    return format_duration(None if seconds in (None, "") else float(seconds))


@register.filter
def ago(moment: datetime | None) -> str:
    """ "just now" under a minute, else "3 minutes ago", "2 days, 4 hours ago"."""
    if moment is None:
        return ""
    if (timezone.now() - moment).total_seconds() < 60:
        return "just now"
    return f"{timesince(moment)} ago"
