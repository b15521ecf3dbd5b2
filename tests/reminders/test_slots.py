"""Schedule slots as the services serve them: one run per (reminder, slot), the slot taken from the schedule
and not from the moment a fire comes, the catch-up each minute, and missed slots told to the operator."""

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from django.db import IntegrityError
from django.urls import reverse

from core.models import Notification, RunStatus
from reminders.models import PauseCause, ReminderRun, RunTrigger
from reminders.schedule import slot_due
from reminders.selectors import reminder_spec
from reminders.services import (
    SLOT_MISSED,
    reminder_fire,
    reminder_fire_scheduled,
    reminder_slot_fire,
    reminder_slots_catch_up,
    reminder_update,
)
from tests.support.reminders import KL, groups_world, make_reminder

pytestmark = pytest.mark.django_db

# 09:00 in Kuala Lumpur (UTC+8) on Wednesday 25 November 2026 is 01:00 UTC.
NINE_KL = datetime(2026, 11, 25, 1, 0, tzinfo=UTC)


@pytest.fixture
def world(fanout_world):
    return fanout_world(groups_world(groups=3))


@pytest.fixture
def daily(world, at):
    """A reminder due at 09:00 and 12:00 Kuala Lumpur time, in a 09:00–18:00 window, made the evening before."""
    at(NINE_KL - timedelta(hours=12))
    return make_reminder(timezone=KL, start=9, end=18, schedule_crontab="0 9,12 * * *")


def slot_runs(reminder) -> list[tuple[datetime, str]]:
    return list(ReminderRun.objects.filter(reminder=reminder).order_by("slot").values_list("slot", "status"))


def test_the_slot_is_the_latest_due_time_not_the_moment_the_fire_came(daily):
    assert slot_due(daily, NINE_KL + timedelta(seconds=40)) == NINE_KL
    assert slot_due(daily, NINE_KL + timedelta(hours=2, minutes=59)) == NINE_KL
    assert slot_due(daily, NINE_KL + timedelta(hours=3)) == NINE_KL + timedelta(hours=3)
    assert slot_due(daily, NINE_KL - timedelta(seconds=1)) == NINE_KL - timedelta(hours=21), "yesterday's 12:00"


def test_a_one_off_reminder_has_one_slot_its_time(world, at):
    at(NINE_KL - timedelta(hours=1))
    reminder = make_reminder(timezone=KL, start=9, end=18, schedule_at=NINE_KL + timedelta(minutes=30))

    assert slot_due(reminder, NINE_KL) is None
    assert slot_due(reminder, NINE_KL + timedelta(days=3)) == NINE_KL + timedelta(minutes=30)


def test_the_same_slot_fired_three_times_makes_one_run(daily, at):
    at(NINE_KL + timedelta(seconds=2))
    first = reminder_fire_scheduled(reminder_id=daily.pk, fired_at=NINE_KL + timedelta(seconds=1))
    # a second beat, a restarted one, a redelivered task: later, but the same slot
    at(NINE_KL + timedelta(minutes=5))
    again = [reminder_fire_scheduled(reminder_id=daily.pk, fired_at=NINE_KL + timedelta(minutes=m)) for m in (3, 5)]

    assert first is not None and first.slot == NINE_KL and first.trigger == RunTrigger.SCHEDULE
    assert again == [None, None]
    assert slot_runs(daily) == [(NINE_KL, RunStatus.QUEUED)]


def test_the_database_refuses_a_second_run_of_a_slot(daily, at):
    at(NINE_KL)
    run = reminder_slot_fire(reminder=daily, slot=NINE_KL, enqueue=False)

    with pytest.raises(IntegrityError):
        ReminderRun.objects.create(reminder=daily, account=run.account, trigger=RunTrigger.SCHEDULE, slot=NINE_KL)


def test_send_now_runs_have_no_slot_and_do_not_take_the_schedules(daily, at):
    at(NINE_KL + timedelta(minutes=1))
    manual = reminder_fire(reminder=daily, enqueue=False)
    ReminderRun.objects.filter(pk=manual.pk).update(status=RunStatus.SUCCESS)

    scheduled = reminder_fire_scheduled(reminder_id=daily.pk, fired_at=NINE_KL + timedelta(minutes=1))

    assert manual.slot is None and manual.trigger == RunTrigger.MANUAL
    assert scheduled is not None and scheduled.slot == NINE_KL


def test_the_catch_up_serves_a_slot_beat_never_fired_once(daily, at, enqueued, django_capture_on_commit_callbacks):
    at(NINE_KL + timedelta(minutes=3))

    with django_capture_on_commit_callbacks(execute=True):
        made = reminder_slots_catch_up()
        made_again = reminder_slots_catch_up()
    late_fire = reminder_fire_scheduled(reminder_id=daily.pk, fired_at=NINE_KL + timedelta(minutes=3))

    assert len(made) == 1 and made_again == [] and late_fire is None
    assert slot_runs(daily) == [(NINE_KL, RunStatus.QUEUED)]
    assert enqueued == made, "the caught-up run was sent to the workers"


def test_a_slot_whose_window_closed_is_recorded_missed_and_told(
    daily, at, enqueued, django_capture_on_commit_callbacks
):
    # beat and the catch-up were down from before 12:00 until after the window closed at 18:00
    ReminderRun.objects.create(reminder=daily, account=daily.account, slot=NINE_KL, status=RunStatus.SUCCESS)
    at(NINE_KL + timedelta(hours=9, minutes=30))

    with django_capture_on_commit_callbacks(execute=True):
        made = reminder_slots_catch_up()

    noon = NINE_KL + timedelta(hours=3)
    assert slot_runs(daily) == [(NINE_KL, RunStatus.SUCCESS), (noon, RunStatus.FAILED)]
    missed = ReminderRun.objects.get(pk__in=made)
    assert (missed.pause_cause, missed.pending, missed.sent) == (PauseCause.MISSED, 3, 0)
    assert "12:00 today (Asia/Kuala_Lumpur) did not go out" in missed.error_summary
    assert "delivery window closed, 18:00 today" in missed.error_summary
    assert enqueued == [], "a missed slot sends nothing by itself"
    notification = Notification.objects.get(type=SLOT_MISSED)
    assert notification.title == "“Weekly promo” missed a scheduled send — Send now to send it."
    assert notification.url == f"/reminders/{daily.pk}/"
    assert reminder_fire_scheduled(reminder_id=daily.pk, fired_at=noon + timedelta(hours=1)) is None


def test_of_two_slots_nothing_fired_only_the_latest_goes_out(world, at, enqueued):
    at(NINE_KL - timedelta(hours=1))
    reminder = make_reminder(timezone=KL, start=9, end=18, schedule_crontab="*/10 9-17 * * *")
    at(NINE_KL + timedelta(minutes=25))  # 09:00 and 09:10 and 09:20 were due, nothing fired

    reminder_slots_catch_up()

    runs = slot_runs(reminder)
    assert runs == [
        (NINE_KL, RunStatus.FAILED),
        (NINE_KL + timedelta(minutes=10), RunStatus.FAILED),
        (NINE_KL + timedelta(minutes=20), RunStatus.QUEUED),
    ], "sending the older ones now would give every group three copies at once"
    assert Notification.objects.get(type=SLOT_MISSED).count == 2


def test_slots_due_before_the_reminder_was_saved_are_not_caught_up(world, at, enqueued):
    at(NINE_KL + timedelta(minutes=5))
    reminder = make_reminder(timezone=KL, start=9, end=18, schedule_crontab="0 9 * * *")

    assert reminder_slots_catch_up() == []
    assert slot_runs(reminder) == []


def test_a_late_fire_of_the_old_schedule_is_not_served_but_other_edits_keep_the_slot(daily, at, enqueued):
    at(NINE_KL + timedelta(seconds=30))
    reminder_update(reminder=daily, spec=replace(reminder_spec(reminder=daily), name="Renamed"))
    # a beat restarted now fires the 09:00 slot again, or its task comes late: a name change keeps it
    assert reminder_fire_scheduled(reminder_id=daily.pk, fired_at=NINE_KL + timedelta(seconds=40)).slot == NINE_KL

    at(NINE_KL + timedelta(hours=3, seconds=30))
    reminder_update(reminder=daily, spec=replace(reminder_spec(reminder=daily), schedule_crontab="0 10 * * *"))

    assert reminder_fire_scheduled(reminder_id=daily.pk, fired_at=NINE_KL + timedelta(hours=3, seconds=40)) is None
    assert reminder_slots_catch_up() == [], "10:00 was due before the change: not a slot of this schedule"
    assert slot_runs(daily) == [(NINE_KL, RunStatus.QUEUED)]


def test_an_off_reminder_is_not_caught_up(daily, at, enqueued):
    at(NINE_KL - timedelta(hours=1))
    reminder_update(reminder=daily, spec=replace(reminder_spec(reminder=daily), enabled=False))
    at(NINE_KL + timedelta(minutes=1))

    assert reminder_slots_catch_up() == []
    assert reminder_fire_scheduled(reminder_id=daily.pk, fired_at=NINE_KL) is None


def test_the_dashboard_offers_send_now_for_a_missed_slot_and_its_notification_resolves(
    daily, at, enqueued, admin_client, django_capture_on_commit_callbacks
):
    at(NINE_KL + timedelta(hours=9, minutes=30))  # 18:30: both of today's slots missed, the window closed
    missed = ReminderRun.objects.get(pk=reminder_slots_catch_up()[0])
    at(NINE_KL + timedelta(days=1, minutes=5))  # the next morning, inside the window

    page = admin_client.get(reverse("dashboard")).content.decode()

    assert f'aria-label="Send the missed run #{missed.pk} now">Send now</button>' in page
    assert "Slot missed" in page and "did not go out" in page
    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post(reverse("attention-run-resume", args=[missed.pk]), HTTP_HX_REQUEST="true")
    missed.refresh_from_db()
    assert (missed.status, missed.pause_cause, enqueued) == (RunStatus.QUEUED, "", [missed.pk])
    notification = Notification.objects.get(type=SLOT_MISSED)
    assert notification.resolved_at is not None, "the operator acted on it"


def test_the_upgrade_gives_recent_scheduled_runs_their_slot(daily, at):
    from importlib import import_module

    from django.apps import apps

    upgrade = import_module("reminders.migrations.0009_slots_from_upgrade").slots_from_upgrade
    served = ReminderRun.objects.create(
        reminder=daily, account=daily.account, trigger=RunTrigger.SCHEDULE, status=RunStatus.SUCCESS
    )
    again = ReminderRun.objects.create(
        reminder=daily, account=daily.account, trigger=RunTrigger.SCHEDULE, status=RunStatus.SUCCESS
    )
    ReminderRun.objects.filter(pk=served.pk).update(fired_at=datetime.now(UTC) - timedelta(minutes=2))
    ReminderRun.objects.filter(pk=again.pk).update(fired_at=datetime.now(UTC) - timedelta(minutes=1))

    upgrade(apps, None)

    served.refresh_from_db()
    again.refresh_from_db()
    assert served.slot == slot_due(daily, served.fired_at) and again.slot is None, "the beat's second run of it"
