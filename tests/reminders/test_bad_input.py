"""Input a person (or a script) gets wrong answers with the field named: never a 500, nothing half saved."""

import pytest
from django.urls import reverse
from django_celery_beat.models import CrontabSchedule, PeriodicTask
from rest_framework.test import APIClient

from accounts.models import Chat
from reminders.models import Reminder
from reminders.schedule import crontab_parse
from tests.support.pages import HTMX, body, compose, current_step, htmx_post
from tests.support.reminders import KL, group_id, groups_world

pytestmark = pytest.mark.django_db

LONG_HOURS = ",".join(["9"] * 49)  # 97 characters: one above CrontabSchedule.hour's varchar(96)
BAD_CRONTABS = [
    ("-1 9 * * *", "negative numbers not supported"),
    (f"0 {LONG_HOURS} * * *", "The hour field of a crontab is at most 96 characters."),
    ("0 9 * * * " + "x" * 200, "A crontab is at most 120 characters"),
]


@pytest.fixture
def api(admin_user):
    client = APIClient()
    client.force_authenticate(admin_user)
    return client


@pytest.mark.parametrize(("expression", "message"), BAD_CRONTABS)
def test_crontab_parse_errors_are_value_errors_with_a_reason(expression, message):
    with pytest.raises(ValueError, match=message):
        crontab_parse(expression)


@pytest.mark.parametrize(("expression", "message"), BAD_CRONTABS)
def test_a_bad_crontab_is_a_400_naming_the_schedule(api, fanout_world, expression, message):
    fanout_world(groups_world(groups=2))

    response = api.post("/api/reminders/", body(schedule={"crontab": expression}), format="json")

    assert response.status_code == 400, response.content
    assert response.json()["message"].startswith("schedule:") and message in response.json()["message"]
    assert not Reminder.objects.exists() and not PeriodicTask.objects.exists()
    assert not CrontabSchedule.objects.filter(hour=LONG_HOURS).exists()


@pytest.mark.parametrize(("expression", "message"), BAD_CRONTABS[:2])
def test_a_bad_crontab_is_named_in_the_form_which_keeps_it(operator, fanout_world, expression, message):
    fanout_world(groups_world(groups=2))

    html = htmx_post(
        operator, reverse("reminders:compose"), compose(step="when", crontab=expression, action="goto-review")
    )

    assert current_step(html) == "when" and message in html
    assert f'value="{expression}"' in html
    assert not Reminder.objects.exists()


@pytest.mark.parametrize(
    ("at", "message"),
    [
        ("9999-06-01T00:00:00Z", "schedule: The one-off time is more than 10 years ahead"),
        ("9999-12-31T23:30:00-12:00", "schedule: at:"),
        ("0001-01-01T00:00:00+14:00", "schedule: at:"),
        ("2027-02-30T10:00:00Z", "schedule: at:"),
        ("tomorrow", "schedule: at:"),
    ],
)
def test_a_one_off_time_out_of_range_or_unreadable_is_a_400(api, fanout_world, at, message):
    fanout_world(groups_world(groups=2))

    response = api.post("/api/reminders/", body(schedule={"at": at}), format="json")

    assert response.status_code == 400, response.content
    assert response.json()["message"].startswith(message), response.json()
    assert not Reminder.objects.exists()


def test_a_far_year_in_the_form_is_an_error_not_a_500(operator, fanout_world):
    fanout_world(groups_world(groups=2))
    url = reverse("reminders:compose")

    html = htmx_post(
        operator, url, compose(step="when", timezone=KL, schedule="once", at="9999-12-31T23:30", action="goto-review")
    )
    assert current_step(html) == "when" and "more than 10 years ahead" in html
    eta = operator.post(
        reverse("reminders:eta"), compose(step="when", timezone=KL, schedule="once", at="9999-12-31T23:30"), **HTMX
    )
    assert eta.status_code == 200 and "Pick a time within 10 years" in eta.content.decode()


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"targets": 10**30}, "targets:"),
        ({"parts": 2**63}, "parts:"),
        ({"targets": 10**6, "parts": 10**3, "fire_at": "9999-12-31T00:00:00Z"}, "fire_at:"),
        ({"fire_at": "0001-01-01T00:00:00+14:00"}, "fire_at:"),
        ({"timezone": "Not/AZone"}, "timezone:"),
    ],
)
def test_eta_with_huge_numbers_or_far_dates_is_a_400(api, fanout_world, changes, field):
    data = {"targets": 10, "parts": 1, "timezone": KL, "window_start_hour": 9, "window_end_hour": 18} | changes

    response = api.post("/api/reminders/eta/", data, format="json")

    assert response.status_code == 400, response.content
    assert response.json()["message"].startswith(field), response.json()


def test_the_largest_eta_accepted_still_answers(api):
    data = {"targets": 10**6, "parts": 10**3, "timezone": KL, "window_start_hour": 9, "window_end_hour": 18}

    response = api.post("/api/reminders/eta/", data, format="json")

    assert response.status_code == 200 and response.json()["fits"] is False


def test_a_topic_id_beyond_telegrams_32_bits_is_a_400(api, fanout_world):
    fanout_world(groups_world(groups=2, forum=True))

    response = api.post("/api/reminders/", body(targets=[{"chat": group_id(0), "topic": 2**31}]), format="json")

    assert response.status_code == 400 and response.json()["message"].startswith("targets:"), response.json()
    assert not Reminder.objects.exists()


def test_a_topic_id_beyond_32_bits_in_the_form_is_named(operator, fanout_world):
    fanout_world(groups_world(groups=2, forum=True))
    pk = Chat.objects.get(telegram_id=group_id(0)).pk

    html = htmx_post(
        operator,
        reverse("reminders:compose"),
        compose(step="groups", targets=[str(pk)], **{f"topic-{pk}": "99999999999"}, action="goto-when"),
    )

    assert current_step(html) == "groups" and "A topic id is a number from 1 to 2147483647." in html
    assert 'value="99999999999"' in html
