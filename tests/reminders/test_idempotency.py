"""Idempotency-Key on the API's POSTs that start work, through a reminder's fire and a run's resume: a retry with
the same key gets the first answer and starts nothing, even when the first answer was lost to a 500 after the
run was committed."""

import threading
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone
from kombu.exceptions import OperationalError
from rest_framework.test import APIClient

from core.idempotency import idempotent_requests_purge
from core.models import IdempotentRequest
from reminders.models import ReminderRun
from tests.support.reminders import groups_world, make_reminder

pytestmark = pytest.mark.django_db

ACTION_ENDPOINTS = [
    ("/api/reminders/{id}/fire/", "post"),
    ("/api/reminder-runs/{id}/resume/", "post"),
    ("/api/reminder-runs/{id}/retry-failed/", "post"),
    ("/api/reminder-runs/{id}/move/", "post"),
    ("/api/packages/{id}/send/", "post"),
    ("/api/collections/{id}/send/", "post"),
    ("/api/package-sends/{id}/retry/", "post"),
    ("/api/ingestion/trigger/", "post"),
    ("/api/catalog-audits/{id}/repair-missing/", "post"),
    ("/api/catalog/rebuild/", "post"),
    ("/api/skipped-packages/{id}/retry/", "post"),
    ("/api/skipped-packages/retry-all/", "post"),
]


@pytest.fixture
def world(fanout_world):
    return fanout_world(groups_world(groups=3))


def fire(api, reminder, key: str | None, body=None):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return api.post(f"/api/reminders/{reminder.pk}/fire/", body or {"again": True}, format="json", **headers)


def test_a_retry_with_the_same_key_gets_the_first_answer_and_starts_nothing(api, world):
    reminder = make_reminder()
    key = str(uuid.uuid4())

    first = fire(api, reminder, key)
    retry = fire(api, reminder, key)

    assert first.status_code == retry.status_code == 201
    assert retry.json() == first.json() and retry["Idempotent-Replayed"] == "true"
    assert ReminderRun.objects.filter(reminder=reminder).count() == 1, "even with `again`, the retry is the same"
    assert fire(api, reminder, str(uuid.uuid4())).status_code == 201, "a new key is a new request"
    assert ReminderRun.objects.filter(reminder=reminder).count() == 2


def test_the_same_key_with_another_body_is_refused(api, world):
    reminder = make_reminder()
    fire(api, reminder, "key-1")

    refused = fire(api, reminder, "key-1", body={"again": False})

    assert refused.status_code == 422
    assert refused.json()["message"] == (
        "This Idempotency-Key was sent before with another body on this endpoint; use a new key for a new request."
    )


def test_keys_belong_to_one_user_and_one_endpoint(api, world, django_user_model):
    first, second = make_reminder(name="First"), make_reminder(name="Second")
    other = APIClient()
    other.force_authenticate(django_user_model.objects.create_superuser("second-operator", password="x"))

    answers = [fire(api, first, "shared"), fire(api, second, "shared"), fire(other, first, "shared")]

    assert [answer.status_code for answer in answers] == [201, 201, 201]
    assert len({answer.json()["id"] for answer in answers}) == 3


def test_a_refusal_is_not_kept_so_its_retry_is_judged_again(api, world):
    reminder = make_reminder()
    going = fire(api, reminder, None).json()

    refused = fire(api, reminder, "after-409", body={"again": False})
    ReminderRun.objects.filter(pk=going["id"]).update(status="success")
    retried = fire(api, reminder, "after-409", body={"again": False})

    assert (refused.status_code, retried.status_code) == (409, 201)


def test_a_bad_key_is_refused_with_what_fits(api, world):
    reminder = make_reminder()

    for key in ("", "x" * 201):
        answer = fire(api, reminder, key)
        assert answer.status_code == 400
        assert answer.json()["message"] == "Idempotency-Key must be 1 to 200 characters; a UUID fits."
    assert not ReminderRun.objects.exists()


def test_keys_expire_after_a_day(api, world, settings):
    reminder = make_reminder()
    first = fire(api, reminder, "daily").json()
    kept = timedelta(hours=settings.IDEMPOTENCY_KEEP_HOURS)
    IdempotentRequest.objects.update(created_at=timezone.now() - kept - timedelta(seconds=1))

    assert fire(api, reminder, "daily").json()["id"] != first["id"]
    IdempotentRequest.objects.update(created_at=timezone.now() - timedelta(hours=25))
    assert idempotent_requests_purge(older_than=timedelta(hours=24)) == 1


@pytest.mark.django_db(transaction=True)
def test_a_500_after_the_run_was_committed_is_retried_safely(api, world, monkeypatch):
    """The broker is down when the run's task is sent, after commit: the client sees a 500 and retries."""
    from reminders.services import runs

    reminder = make_reminder()

    def broker_down(run_id):
        raise OperationalError("Error 111 connecting to localhost:6379. Connection refused.")

    monkeypatch.setattr(runs, "reminder_run_enqueue", broker_down)
    api.raise_request_exception = False
    lost = fire(api, reminder, "retry-after-500")
    monkeypatch.undo()
    retry = fire(api, reminder, "retry-after-500")

    assert lost.status_code == 500 and retry.status_code == 201
    run = ReminderRun.objects.get(reminder=reminder)
    assert retry.json()["id"] == run.pk and run.status == "queued", "the beat re-sends a run left queued"


@pytest.mark.django_db(transaction=True)
def test_two_requests_with_one_key_at_once_start_one_run(world, admin_user):
    reminder = make_reminder()
    barrier, answers = threading.Barrier(2), []

    def send():
        client = APIClient()
        client.force_authenticate(admin_user)
        barrier.wait()
        try:
            answers.append(fire(client, reminder, "twin"))
        finally:
            connection.close()

    twins = [threading.Thread(target=send) for _ in range(2)]
    for thread in twins:
        thread.start()
    for thread in twins:
        thread.join()

    assert sorted(answer.status_code for answer in answers) == [201, 201]
    assert answers[0].json() == answers[1].json()
    assert ReminderRun.objects.filter(reminder=reminder).count() == 1


def test_the_schema_names_the_header_on_every_action_that_starts_work(api):
    paths = api.get("/api/schema/", {"format": "json"}).json()["paths"]

    for path, method in ACTION_ENDPOINTS:
        parameters = paths[path][method].get("parameters", [])
        assert {"in": "header", "name": "Idempotency-Key"}.items() <= next(
            (p for p in parameters if p["name"] == "Idempotency-Key"), {}
        ).items(), path
