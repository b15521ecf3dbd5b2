"""What a reminder run came to, in the one vocabulary (core.outcomes), on Activity, its page, the dashboard and in
the API: canceled with nothing sent is "Canceled", not "Partial"; a missed slot did nothing; a run with failed groups
is partial; each run sits under the Activity pill its badge names."""

from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from core.outcomes import Outcome
from reminders.models import RUN_OUTCOME_FILTERS, ReminderRun
from reminders.services import reminder_fire, reminder_run_cancel, reminder_slots_catch_up
from tests.support.reminders import KL, execute, group_id, groups_world, make_reminder, paused_run

pytestmark = pytest.mark.django_db

NINE_KL = datetime(2026, 11, 25, 1, 0, tzinfo=UTC)


def agrees_with_its_filter(run: ReminderRun) -> bool:
    under = [key for key, where in RUN_OUTCOME_FILTERS.items() if ReminderRun.objects.filter(where, pk=run.pk)]
    return under == [run.outcome.key]


@pytest.fixture
def runs(fanout_world, at, enqueued):
    """One run of each ending, made the way the operator and the schedule make them."""
    fanout_world(groups_world(groups=4, faults=[{"op": "send", "chat": group_id(2), "error": "write_forbidden"}]))
    at(NINE_KL - timedelta(hours=12))
    daily = make_reminder(name="Daily", timezone=KL, start=9, end=10, schedule_crontab="0 9 * * *")
    at(NINE_KL + timedelta(hours=2))  # 11:00 KL: today's 09:00 went by, and its window closed at 10:00
    made = {"missed": ReminderRun.objects.get(pk=reminder_slots_catch_up()[0], reminder=daily)}
    made["paused"] = paused_run(at, sent=1)  # the clock is now the next morning, inside 09:00–18:00 KL
    made["partial"] = execute(reminder_fire(reminder=make_reminder(name="Weekly promo")))
    made["canceled"] = reminder_run_cancel(run=reminder_fire(reminder=make_reminder(name="Called off")))
    made["waiting"] = reminder_fire(reminder=make_reminder(name="Next in line"))
    return made


def test_each_ending_of_a_reminder_run_says_what_it_came_to(runs):
    said = {name: (run.outcome.key, run.outcome.why) for name, run in runs.items()}

    assert said == {
        "paused": (Outcome.PAUSED, "Delivery window closed"),
        "partial": (Outcome.PARTIAL, "3 of 4 groups delivered, 1 failed"),
        "canceled": (Outcome.CANCELED, "0 of 4 groups delivered"),
        "waiting": (Outcome.WAITING, "for a worker, or for this account's other run"),
        "missed": (Outcome.IDLE, "Slot missed"),
    }
    assert runs["canceled"].status == "partial", "the stored status keeps its meaning; the outcome says canceled"
    assert all(agrees_with_its_filter(run) for run in runs.values())


def test_activity_the_run_page_the_dashboard_and_the_api_use_the_same_words(runs, operator, api):
    canceled, missed = runs["canceled"], runs["missed"]

    activity = operator.get(reverse("reminders:activity")).content.decode()
    only_canceled = operator.get(reverse("reminders:activity"), {"status": "canceled"}).content.decode()
    run_page = operator.get(reverse("reminders:activity-run", args=[canceled.pk])).content.decode()
    dashboard = operator.get(reverse("dashboard")).content.decode()
    listed = api.get("/api/reminder-runs/", {"outcome": "canceled"}).json()["results"]

    assert 'Canceled <span class="pill-count">1</span>' in activity
    assert 'Did nothing <span class="pill-count">1</span>' in activity
    assert f'id="run-{canceled.pk}"' in only_canceled and f'id="run-{runs["partial"].pk}"' not in only_canceled
    assert f"Run #{canceled.pk} canceled — 0 of 4 groups delivered" in run_page
    assert 'class="badge outcome--canceled"' in run_page and "Partial" not in run_page
    assert f'id="attention-run-{missed.pk}"' in dashboard
    assert '<span class="outcome-why">Slot missed</span>' in dashboard
    assert [(run["id"], run["status"], run["outcome"], run["outcome_text"]) for run in listed] == [
        (canceled.pk, "partial", "canceled", "Canceled: 0 of 4 groups delivered")
    ]
