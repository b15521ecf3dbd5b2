"""Now, from one place: tests move time (a delivery window closing) by replacing `now` instead of sleeping."""

from datetime import datetime

from django.utils import timezone


def now() -> datetime:
    """An aware UTC datetime. Call it as `clock.now()` so that a replaced one is seen."""
    return timezone.now()
