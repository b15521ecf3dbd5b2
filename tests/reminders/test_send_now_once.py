"""Send now while a run of the reminder is still going on offers that run; a second run to every group takes
an explicit "send again", on the page and in the API (which otherwise answers 409 naming the run). Runs show
the schedule slot they serve."""

import re
import threading
from datetime import UTC, datetime

import pytest
from django.db import connection
from django.urls import reverse

from core.models import RunStatus
from reminders.models import WAITING, ReminderRun
from reminders.services import ReminderRunActive, reminder_fire, reminder_slot_fire
from tests.support.reminders import KL, KL_MORNING, groups_world, make_reminder

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def world(fanout_world):
    return fanout_world(groups_world(groups=3))


@pytest.mark.parametrize("status", [RunStatus.QUEUED, WAITING, RunStatus.RUNNING, RunStatus.PAUSED])
def test_send_now_with_a_run_going_on_names_it_instead_of_a_second(world, status):
    reminder = make_reminder()
    first = reminder_fire(reminder=reminder, enqueue=False)
    ReminderRun.objects.filter(pk=first.pk).update(status=status)

    with pytest.raises(ReminderRunActive) as refused:
        reminder_fire(reminder=reminder, enqueue=False)

    assert refused.value.run.pk == first.pk
    assert f"Run #{first.pk} of “Weekly promo” is" in refused.value.message
    assert ReminderRun.objects.filter(reminder=reminder).count() == 1


@pytest.mark.parametrize("status", [RunStatus.SUCCESS, RunStatus.PARTIAL, RunStatus.FAILED])
def test_send_now_after_the_last_run_ended_sends(world, status):
    reminder = make_reminder()
    first = reminder_fire(reminder=reminder, enqueue=False)
    ReminderRun.objects.filter(pk=first.pk).update(status=status)

    assert reminder_fire(reminder=reminder, enqueue=False).pk != first.pk


def test_send_again_makes_a_deliberate_second_run(world):
    reminder = make_reminder()
    first = reminder_fire(reminder=reminder, enqueue=False)

    second = reminder_fire(reminder=reminder, enqueue=False, again=True)

    assert second.pk != first.pk and (second.status, second.total) == (RunStatus.QUEUED, 3)


def test_a_scheduled_slot_goes_out_beside_a_send_now(world):
    reminder = make_reminder(schedule_crontab="0 9 * * *")
    reminder_fire(reminder=reminder, enqueue=False)

    run = reminder_slot_fire(reminder=reminder, slot=datetime(2026, 11, 25, 9, tzinfo=UTC), enqueue=False)

    assert run is not None, "a schedule is the operator's standing word: it is not held back by a manual run"


@pytest.mark.django_db(transaction=True)
def test_two_send_now_presses_at_once_make_one_run(world):
    reminder = make_reminder()
    barrier, outcomes = threading.Barrier(2), []

    def press():
        barrier.wait()
        try:
            outcomes.append(reminder_fire(reminder=reminder, enqueue=False).pk)
        except ReminderRunActive as exc:
            outcomes.append(f"refused, names #{exc.run.pk}")
        finally:
            connection.close()

    presses = [threading.Thread(target=press) for _ in range(2)]
    for thread in presses:
        thread.start()
    for thread in presses:
        thread.join()

    run = ReminderRun.objects.get(reminder=reminder)
    assert sorted(outcomes, key=str) == sorted([run.pk, f"refused, names #{run.pk}"], key=str)


# API ----------------------------------------------------------------------------------------------------------------


def test_the_api_answers_409_naming_the_run_going_on(api, world):
    reminder = make_reminder()
    first = api.post(f"/api/reminders/{reminder.pk}/fire/").json()

    refused = api.post(f"/api/reminders/{reminder.pk}/fire/", {}, format="json")

    assert refused.status_code == 409
    body = refused.json()
    assert body["message"].startswith(f"Run #{first['id']} of “Weekly promo” is waiting (0 of 3 groups delivered)")
    assert (body["run"]["id"], body["run"]["status"]) == (first["id"], "queued")
    assert ReminderRun.objects.count() == 1

    again = api.post(f"/api/reminders/{reminder.pk}/fire/", {"again": True}, format="json")

    assert again.status_code == 201 and again.json()["id"] != first["id"]
    assert api.post(f"/api/reminders/{reminder.pk}/fire/", {"again": "maybe"}, format="json").status_code == 400


def test_the_api_shows_a_runs_slot(api, world):
    reminder = make_reminder(schedule_crontab="30 9 * * *")
    slot = datetime(2026, 11, 25, 9, 30, tzinfo=UTC)
    run = reminder_slot_fire(reminder=reminder, slot=slot, enqueue=False)
    manual = api.post(f"/api/reminders/{reminder.pk}/fire/", {"again": True}, format="json").json()

    assert api.get(f"/api/reminder-runs/{run.pk}/").json()["slot"] == "2026-11-25T09:30:00Z"
    assert manual["slot"] is None
    schema = api.get("/api/schema/", {"format": "json"}).json()
    assert "slot" in schema["components"]["schemas"]["ReminderRun"]["properties"]


# Pages --------------------------------------------------------------------------------------------------------------


def test_the_page_offers_the_run_going_on_and_send_again_with_the_group_count(operator, world, at):
    reminder = make_reminder(timezone=KL, start=9, end=18)
    at(KL_MORNING)
    operator.post(reverse("reminders:send-now", args=[reminder.pk]))
    run = ReminderRun.objects.get(reminder=reminder)

    for url in (reverse("reminders:detail", args=[reminder.pk]), reverse("reminders:list")):
        page = operator.get(url).content.decode()
        assert f'href="{reverse("reminders:activity-run", args=[run.pk])}">Run #{run.pk} is waiting</a>' in page, url
        assert "Send again to every group" in page and '<span class="when-idle">Send now</span>' not in page, url
        confirm = re.search(r'action="/reminders/\d+/send-now/"[^>]*hx-confirm="([^"]*)"', page).group(1)
        assert confirm == (
            f"Run #{run.pk} of “Weekly promo” is still waiting (0 of 3 groups delivered). Send it again to every "
            "group, all 3 groups? Groups that already got it get it twice."
        ), url

    # a plain Send now (a page from before the run, or a second operator) is refused and told
    response = operator.post(reverse("reminders:send-now", args=[reminder.pk]), {"waits": "no"}, follow=True)
    assert f"Run #{run.pk} of “Weekly promo” is waiting" in response.content.decode()
    assert ReminderRun.objects.filter(reminder=reminder).count() == 1

    operator.post(reverse("reminders:send-now", args=[reminder.pk]), {"waits": "no", "again": str(run.pk)})
    assert ReminderRun.objects.filter(reminder=reminder).count() == 2


def test_a_paused_run_is_offered_with_resume(operator, world, at):
    reminder = make_reminder(timezone=KL, start=9, end=18)
    at(KL_MORNING)
    run = reminder_fire(reminder=reminder, enqueue=False)
    ReminderRun.objects.filter(pk=run.pk).update(status=RunStatus.PAUSED)

    page = operator.get(reverse("reminders:detail", args=[reminder.pk])).content.decode()

    assert f"Run #{run.pk} is paused</a>" in page
    assert f'action="{reverse("reminders:activity-resume", args=[run.pk])}"' in page


def test_activity_shows_the_slot_a_run_serves(operator, world):
    reminder = make_reminder(schedule_crontab="30 9 * * *")
    run = reminder_slot_fire(reminder=reminder, slot=datetime(2026, 11, 25, 9, 30, tzinfo=UTC), enqueue=False)

    activity = operator.get(reverse("reminders:activity")).content.decode()
    detail = operator.get(reverse("reminders:activity-run", args=[run.pk])).content.decode()

    assert 'for <time datetime="2026-11-25T09:30:00+00:00"' in activity
    assert "for the send due" in detail and '<time datetime="2026-11-25T09:30:00+00:00" title=' in detail
