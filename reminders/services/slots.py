"""Schedule slots: every due time of a reminder's schedule is served by exactly one run.

The fire task (beat) and a catch-up each minute (independent of beat having fired the slot) both come here;
the run's unique (reminder, slot) makes a second fire of the same slot a no-op. A slot still inside its window
gets its run; one that can no longer go out (its window closed, or a later slot came due first) gets a
failed run saying so, and the operator a notification that leads to Send now.
"""

import logging
from datetime import datetime, timedelta
from itertools import takewhile

from django.conf import settings
from django.urls import reverse

from core import clock
from core.notifications import notification_raise
from reminders.models import Reminder, ReminderRun
from reminders.schedule import DeliveryWindow, slot_due, slots_before
from reminders.services.runs import reminder_slot_fire
from reminders.services.summaries import SLOT_MISSED, reminder_slots_subject

logger = logging.getLogger(__name__)


def _slot_text(reminder: Reminder, slot: datetime, now: datetime) -> str:
    return f"{DeliveryWindow.of(reminder).local_when(slot, now)} ({reminder.timezone})"


def _missed(reminder: Reminder, slot: datetime, *, why: str, now: datetime) -> ReminderRun | None:
    summary = (
        f"The send due {_slot_text(reminder, slot, now)} did not go out: {why}. No group got it. "
        "Send now to send it, or Resume this run inside the window."
    )
    run = reminder_slot_fire(reminder=reminder, slot=slot, missed=summary)
    if run is None:
        return None
    logger.warning("Reminder %s missed its slot %s: %s", reminder.pk, slot.isoformat(), why)
    notification_raise(
        type=SLOT_MISSED,
        severity="error",
        title=f"“{reminder.name}” missed a scheduled send — Send now to send it.",
        message=summary,
        subject=reminder_slots_subject(reminder.pk),
        url=reverse("reminders:detail", args=[reminder.pk]),
        context={"reminder": reminder.pk, "run": run.pk, "slot": slot.isoformat()},
    )
    return run


def reminder_slot_serve(*, reminder: Reminder, slot: datetime) -> ReminderRun | None:
    """The slot's run: sending (or waiting for its window) while the window it was due in is still to come or
    open, missed once that window has closed; None when the slot has its run already."""
    now = clock.now()
    window = DeliveryWindow.of(reminder).sending_window(slot)
    if window.end_at is not None and window.end_at <= now:
        closed = DeliveryWindow.of(reminder).local_when(window.end_at, now)
        return _missed(reminder, slot, why=f"nothing fired it before its delivery window closed, {closed}", now=now)
    return reminder_slot_fire(reminder=reminder, slot=slot)


def reminder_fire_scheduled(*, reminder_id: int, fired_at: datetime) -> ReminderRun | None:
    """What the reminder's PeriodicTask does: serve the slot due at `fired_at` (the latest due time not after
    it), whatever moment beat or a redelivery runs it; None when off, unscheduled, served already, or due
    before the schedule last changed."""
    reminder = Reminder.objects.filter(pk=reminder_id, enabled=True).first()
    slot = slot_due(reminder, fired_at) if reminder is not None else None
    if slot is None or slot < reminder.schedule_since:
        return None  # a late fire of the schedule as it was before the last change
    return reminder_slot_serve(reminder=reminder, slot=slot)


def reminder_slots_catch_up() -> list[int]:
    """Each minute: the latest due slot of every scheduled reminder gets its run if nothing fired it; older
    slots without a run (beat or Redis was down, a later slot came first) become missed runs. Slots due before
    the schedule last changed belonged to the old one. The new runs' ids."""
    now = clock.now()
    made = []
    reminders = Reminder.objects.filter(enabled=True).exclude(schedule_crontab="", schedule_at__isnull=True)
    for reminder in reminders:
        since = max(reminder.schedule_since, now - timedelta(hours=settings.REMINDER_SLOT_LOOKBACK_HOURS))
        due = list(takewhile(since.__le__, slots_before(reminder, now)))
        if not due:
            continue
        served = set(ReminderRun.objects.filter(reminder=reminder, slot__gte=due[-1]).values_list("slot", flat=True))
        for index, slot in enumerate(due):
            if slot in served:
                continue
            if index == 0:
                run = reminder_slot_serve(reminder=reminder, slot=slot)
            else:
                later = _slot_text(reminder, due[0], now)
                run = _missed(reminder, slot, why=f"nothing fired it before the next send came due, {later}", now=now)
            if run is not None:
                made.append(run.pk)
    return made
