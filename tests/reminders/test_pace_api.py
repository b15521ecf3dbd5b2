"""Pause, move, the stop switch, rests and account health through the API, the pages and /metrics."""

import pytest
from django.urls import reverse
from prometheus_client.parser import text_string_to_metric_families

from accounts import pace
from core.models import RunStatus
from reminders.models import PauseCause, ReminderRun
from reminders.services import reminder_fire, reminder_run_pause
from tests.support.reminders import SENDER, SENDER_B, account, execute, groups_world, make_reminder

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_senders(fanout_world):
    world = groups_world(groups=3, accounts=(SENDER, SENDER_B))
    world["chats"][2]["members"] = [SENDER]  # B is not in Group 0002
    return fanout_world(world)


def test_pause_through_the_api_and_its_state_shows(api, two_senders):
    run = reminder_fire(reminder=make_reminder(), enqueue=False)

    paused = api.post(f"/api/reminder-runs/{run.pk}/pause/")

    assert paused.status_code == 200
    body = paused.json()
    assert (body["status"], body["pause_cause"], body["can_pause"], body["can_resume"]) == (
        "paused",
        "operator",
        False,
        True,
    )
    again = api.post(f"/api/reminder-runs/{run.pk}/pause/")
    assert again.status_code == 409 and "only a queued or running run can be paused" in again.json()["message"]


def test_move_through_the_api_checks_the_account_and_its_groups(api, two_senders):
    run = reminder_fire(reminder=make_reminder(), enqueue=False)
    reminder_run_pause(run=run)

    missing = api.post(f"/api/reminder-runs/{run.pk}/move/", {"account": 999999}, format="json")
    not_in = api.post(f"/api/reminder-runs/{run.pk}/move/", {"account": account(SENDER_B).pk}, format="json")

    assert missing.status_code == 400 and "account" in missing.json()["errors"]
    assert not_in.status_code == 409 and "Group 0002" in not_in.json()["message"]
    run.refresh_from_db()
    assert run.status == RunStatus.PAUSED and run.pending == 3


def test_move_through_the_api_answers_the_new_linked_run(api, fanout_world):
    fanout_world(groups_world(groups=3, accounts=(SENDER, SENDER_B)))
    run = reminder_fire(reminder=make_reminder(), enqueue=False)
    reminder_run_pause(run=run)

    moved = api.post(f"/api/reminder-runs/{run.pk}/move/", {"account": account(SENDER_B).pk}, format="json")

    assert moved.status_code == 200
    body = moved.json()
    assert (body["moved_from"], body["account"], body["status"], body["total"]) == (
        run.pk,
        account(SENDER_B).pk,
        "queued",
        3,
    )
    old = api.get(f"/api/reminder-runs/{run.pk}/").json()
    assert old["status"] == "partial" and f"moved to run #{body['id']}" in old["error_summary"]


def test_the_account_api_shows_health_and_switches_sending(api, fanout_world):
    fanout_world(groups_world(groups=3))
    sender = account()
    execute(reminder_fire(reminder=make_reminder()))
    queued = reminder_fire(reminder=make_reminder(name="Next"), enqueue=False)

    shown = api.get(f"/api/accounts/{sender.pk}/").json()["health"]
    assert (shown["verdict"], shown["sends_last_hour"], shown["sends_last_day"]) == ("healthy", 3, 3)
    assert shown["budget_per_minute"] == shown["ceiling_per_minute"]

    stopped = api.post(f"/api/accounts/{sender.pk}/stop-sending/").json()["health"]
    queued.refresh_from_db()
    assert stopped["verdict"] == "stopped" and stopped["sending_stopped"]
    assert (queued.status, queued.pause_cause) == (RunStatus.PAUSED, PauseCause.SENDING_STOPPED)

    allowed = api.post(f"/api/accounts/{sender.pk}/allow-sending/").json()["health"]
    queued.refresh_from_db()
    assert allowed["verdict"] == "healthy" and queued.status == RunStatus.QUEUED


def test_rest_actions_through_the_api(api, fanout_world):
    fanout_world(groups_world(groups=2))
    sender = account()
    not_resting = api.post(f"/api/accounts/{sender.pk}/end-rest/")
    assert not_resting.status_code == 409 and "is not resting" in not_resting.json()["message"]
    pace.account_rest(account=sender, reason="Telegram answered PEER_FLOOD")
    run = reminder_fire(reminder=make_reminder(), enqueue=False)

    kept = api.post(f"/api/accounts/{sender.pk}/keep-runs-paused/").json()["health"]
    assert kept["verdict"] == "resting" and kept["rest_resumes_runs"] is False
    assert kept["rests"][0]["reason"] == "Telegram answered PEER_FLOOD"
    ended = api.post(f"/api/accounts/{sender.pk}/end-rest/").json()["health"]

    assert ended["resting_until"] is None and ended["rests"][0]["ended_by"] == "operator"
    run.refresh_from_db()
    assert run.status == RunStatus.PAUSED, "the operator said to keep them paused"


def test_metrics_carry_each_accounts_health(admin_user, client, fanout_world):
    fanout_world(groups_world(groups=2))
    execute(reminder_fire(reminder=make_reminder()))
    pace.account_rest(account=account(), reason="PEER_FLOOD")
    client.force_login(admin_user)

    text = client.get("/metrics").content.decode()

    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
    phone = (("phone", SENDER),)
    assert samples[("stashcast_account_sends_last_day", phone)] == 2
    assert samples[("stashcast_account_resting", phone)] == 1
    assert samples[("stashcast_account_health", (("phone", SENDER), ("verdict", "resting")))] == 1
    assert samples[("stashcast_account_send_ceiling_per_minute", phone)] > 0
    health = client.get("/api/metrics/").json()["account_health"]
    assert [(item["phone"], item["health"]["verdict"]) for item in health] == [(SENDER, "resting")]


def test_the_accounts_page_shows_health_and_the_stop_switch_works(admin_user, client, fanout_world):
    fanout_world(groups_world(groups=2))
    sender = account()
    pace.account_rest(account=sender, reason="Telegram answered PEER_FLOOD")
    client.force_login(admin_user)

    page = client.get(reverse("accounts:list")).content.decode()
    assert "Resting until" in page and "Telegram answered PEER_FLOOD" in page and "End rest now" in page
    assert "Stop all sending now" in page

    row = client.post(reverse("accounts:sending", args=[sender.pk]), {"stop": "1"}, HTTP_HX_REQUEST="true")
    html = row.content.decode()
    assert row.status_code == 200 and "Sending stopped" in html and "Allow sending" in html
    assert account().sending_stopped
    ended = client.post(reverse("accounts:rest-end", args=[sender.pk]), HTTP_HX_REQUEST="true").content.decode()
    assert "Rest ended" in ended and not account().is_resting


def test_the_run_panel_offers_pause_and_move(admin_user, client, fanout_world):
    fanout_world(groups_world(groups=2, accounts=(SENDER, SENDER_B)))
    run = reminder_fire(reminder=make_reminder(), enqueue=False)
    client.force_login(admin_user)

    queued = client.get(reverse("reminders:activity-run", args=[run.pk])).content.decode()
    assert reverse("reminders:activity-pause", args=[run.pk]) in queued

    panel = client.post(
        reverse("reminders:activity-pause", args=[run.pk]), {"as": "panel"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Paused: it stops now, even mid-wait" in panel and "Move pending groups" in panel
    moved = client.post(
        reverse("reminders:activity-move", args=[run.pk]),
        {"as": "panel", "account": account(SENDER_B).pk},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    new = ReminderRun.objects.get(moved_from=run)
    assert f"Moved 2 pending groups to run #{new.pk}" in moved
    bad = client.post(
        reverse("reminders:activity-move", args=[new.pk]), {"as": "panel", "account": "x"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert "Pick the account" in bad
