"""The reminders API end to end: media upload, create with validation naming the field, ETA, fire, runs and actions."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django_celery_beat.models import PeriodicTask
from rest_framework.test import APIClient

from core.models import RunStatus
from reminders.models import Reminder, ReminderRun
from reminders.services import reminder_fire
from tests.support.pages import body
from tests.support.reminders import (
    KL,
    KL_AFTER_CLOSE,
    KL_MORNING,
    account,
    execute,
    group_id,
    groups_world,
    make_reminder,
    png_bytes,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(fanout_world):
    return fanout_world(
        groups_world(groups=4, faults=[{"op": "send", "chat": group_id(3), "error": "write_forbidden"}])
    )


def upload(api, content: bytes, name: str = "promo.png") -> dict:
    response = api.post("/api/media/", {"file": SimpleUploadedFile(name, content, "image/png")}, format="multipart")
    assert response.status_code == 201, response.json()
    return response.json()


def test_anonymous_clients_are_refused():
    for path in ("/api/reminders/", "/api/reminder-runs/", "/api/media/"):
        assert APIClient().get(path).status_code in (401, 403)


def test_media_upload_returns_an_id_and_the_same_bytes_the_same_id(api, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    first = upload(api, png_bytes(1))
    again = upload(api, png_bytes(1), "copy.png")

    assert first["id"] == again["id"]
    assert (first["name"], first["mime_type"], first["size"]) == ("promo.png", "image/png", len(png_bytes(1)))
    response = api.post("/api/media/", {}, format="multipart")
    assert response.status_code == 400 and response.json()["message"].startswith("file:")


def test_create_a_reminder_with_text_and_media_parts(api, world):
    media = upload(api, png_bytes(2))
    response = api.post(
        "/api/reminders/",
        body(parts=[{"text": "Big sale today"}, {"media": media["id"], "caption": "Prices inside"}]),
        format="json",
    )

    assert response.status_code == 201, response.json()
    created = response.json()
    assert created["schedule"] == {"crontab": "0 9 * * 1-5"}
    assert created["parts"] == [
        {"order": 0, "text": "Big sale today", "media": None, "album": [], "caption": "", "format": "plain"},
        {"order": 1, "text": "", "media": media["id"], "album": [], "caption": "Prices inside", "format": "plain"},
    ]
    assert [(target["chat"], target["topic"]) for target in created["targets"]] == [
        (group_id(0), None),
        (group_id(1), None),
    ]
    reminder = Reminder.objects.get(pk=created["id"])
    assert PeriodicTask.objects.get(pk=reminder.periodic_task_id).crontab.hour == "9"


def test_a_part_written_in_markdown_is_kept_as_written(api, world):
    response = api.post(
        "/api/reminders/",
        body(parts=[{"text": "**Big** sale [today](https://shop.example)", "format": "markdown"}]),
        format="json",
    )

    assert response.status_code == 201, response.json()
    assert response.json()["parts"] == [
        {
            "order": 0,
            "text": "**Big** sale [today](https://shop.example)",
            "media": None,
            "album": [],
            "caption": "",
            "format": "markdown",
        }
    ]


def test_an_album_part_keeps_its_media_in_order(api, world):
    photos = [upload(api, png_bytes(seed), f"kit-{seed}.png")["id"] for seed in (3, 4, 5)]
    response = api.post(
        "/api/reminders/",
        body(parts=[{"album": photos, "caption": "**Three** kits", "format": "markdown"}]),
        format="json",
    )

    assert response.status_code == 201, response.json()
    assert response.json()["parts"] == [
        {"order": 0, "text": "", "media": None, "album": photos, "caption": "**Three** kits", "format": "markdown"}
    ]


def test_an_album_breaking_telegrams_rules_is_refused(api, world):
    photo = upload(api, png_bytes(6))["id"]
    pdf = api.post(
        "/api/media/",
        {"file": SimpleUploadedFile("rules.pdf", b"%PDF-1.7 rules", "application/pdf")},
        format="multipart",
    ).json()["id"]

    for part, message in (
        ({"album": [photo]}, "parts: parts[0]: an album has 2 to 10 pictures or files; this one has 1."),
        ({"album": [photo] * 11}, "parts: parts[0]: an album has 2 to 10 pictures or files; this one has 11."),
        ({"album": [photo, pdf]}, "parts: parts[0]: an album is photos and videos, or files only, or audio only"),
        ({"album": [photo, photo], "text": "hi"}, "parts: parts[0]: an album carries a caption, not a text"),
    ):
        response = api.post("/api/reminders/", body(parts=[part]), format="json")
        assert response.status_code == 400 and response.json()["message"].startswith(message), response.json()
    assert not Reminder.objects.exists()


def test_a_one_off_time_and_no_schedule(api, world):
    at = api.post("/api/reminders/", body(schedule={"at": "2027-03-01T10:00:00+08:00"}), format="json").json()
    assert at["schedule"] == {"at": "2027-03-01T02:00:00Z"}

    manual = api.post("/api/reminders/", body(name="Manual", schedule=None), format="json")
    assert manual.status_code == 201 and manual.json()["schedule"] is None
    unscheduled = api.post(
        "/api/reminders/", {k: v for k, v in body(name="Bare").items() if k != "schedule"}, format="json"
    )
    assert unscheduled.status_code == 201 and unscheduled.json()["schedule"] is None


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"window_start_hour": 18, "window_end_hour": 9},
            "schedule: The crontab never fires inside the delivery window 18:00–09:00.",
        ),
        ({"window_start_hour": 12, "window_end_hour": 12}, "window_end_hour: The delivery window opens and closes"),
        ({"window_end_hour": 25}, "window_end_hour:"),
        ({"window_start_hour": -1}, "window_start_hour:"),
        ({"timezone": "Europe/Atlantis"}, "timezone: 'Europe/Atlantis' is not an IANA time zone"),
        ({"schedule": {"crontab": "0 9 * *"}}, "schedule: A crontab has 5 fields"),
        ({"schedule": {"crontab": "0 9 * * *", "at": "2027-01-01T10:00:00Z"}}, "schedule:"),
        ({"schedule": {"at": "2020-01-01T10:00:00Z"}}, "schedule: The one-off time has already passed."),
        ({"targets": [{"chat": 999}]}, "targets: targets[0]: chat 999 is unknown"),
        ({"targets": []}, "targets: Pick at least one group or audience."),
        ({"parts": [{"caption": "alone"}]}, "parts: parts[0]: give a text or a media."),
        ({"parts": [{"media": 987654}]}, "parts:"),
        ({"parts": [{"text": "x", "format": "rtf"}]}, "parts:"),
        (
            {"parts": [{"text": "Sale\n<b>today</i>", "format": "html"}]},
            "parts: parts[0]: HTML: </i> at line 2, column 9 (near “</i>”) closes out of order; expected </b> first.",
        ),
        ({"account": 987654}, "account:"),
    ],
)
def test_validation_errors_name_the_field(api, world, changes, message):
    response = api.post("/api/reminders/", body(**changes), format="json")

    assert response.status_code == 400
    assert response.json()["message"].startswith(message), response.json()
    assert not Reminder.objects.exists()


def test_a_forum_topic_must_be_one_the_chat_has(api, fanout_world):
    fanout_world(groups_world(groups=2, forum=True))  # every forum has topic 7, "News"

    unknown = api.post("/api/reminders/", body(targets=[{"chat": group_id(0), "topic": 8}]), format="json")
    known = api.post("/api/reminders/", body(targets=[{"chat": group_id(0), "topic": 7}]), format="json")

    assert unknown.status_code == 400
    assert unknown.json()["message"].startswith("targets: targets[0]: “Group 0000” has no topic 8; pick one of its")
    assert known.status_code == 201, known.json()
    assert known.json()["targets"][0]["topic"] == 7


def test_patch_changes_some_fields_and_keeps_the_rest(api, world):
    created = api.post("/api/reminders/", body(), format="json").json()

    response = api.patch(f"/api/reminders/{created['id']}/", {"window_end_hour": 20, "enabled": False}, format="json")

    assert response.status_code == 200, response.json()
    changed = response.json()
    assert (changed["window_end_hour"], changed["enabled"], changed["name"]) == (20, False, "Black Friday")
    assert changed["parts"] == created["parts"] and changed["targets"] == created["targets"]
    assert PeriodicTask.objects.get(pk=Reminder.objects.get().periodic_task_id).enabled is False
    bad = api.patch(f"/api/reminders/{created['id']}/", {"window_start_hour": 20}, format="json")
    assert bad.status_code == 400 and bad.json()["message"].startswith("window_end_hour:"), bad.json()


def test_eta(api, world, settings):
    settings.REMINDER_MAX_SEND_PER_MINUTE = 40
    response = api.post(
        "/api/reminders/eta/",
        {
            "targets": 1000,
            "parts": 2,
            "fire_at": "2026-11-25T09:00:00+08:00",
            "timezone": KL,
            "window_start_hour": 9,
            "window_end_hour": 18,
            "account": account().pk,
        },
        format="json",
    )

    assert response.status_code == 200, response.json()
    eta = response.json()
    assert (eta["duration_minutes"], eta["fits"], eta["label"]) == (58, True, "Fits in window")
    assert eta["finishes_at"] == "2026-11-25T01:58:00Z" and eta["window_end_at"] == "2026-11-25T10:00:00Z"
    assert eta["rate_per_minute"] == 40 and eta["observed_rate_per_minute"] is None

    late = api.post(
        "/api/reminders/eta/",
        {
            "targets": 1000,
            "parts": 2,
            "fire_at": "2026-11-25T17:30:00+08:00",
            "timezone": KL,
            "window_start_hour": 9,
            "window_end_hour": 18,
        },
        format="json",
    ).json()
    assert (late["fits"], late["label"]) == (False, "Likely to pause — widen the window or split into smaller runs")
    bad = api.post(
        "/api/reminders/eta/",
        {"targets": 1, "parts": 1, "timezone": KL, "window_start_hour": 9, "window_end_hour": 9},
        format="json",
    )
    assert bad.status_code == 400 and bad.json()["message"].startswith("window_end_hour:")

    overnight = api.post(
        "/api/reminders/eta/",
        {
            "targets": 1000,
            "parts": 2,
            "fire_at": "2026-11-25T19:00:00+08:00",
            "timezone": KL,
            "window_start_hour": 22,
            "window_end_hour": 6,
        },
        format="json",
    ).json()
    assert (overnight["fits"], overnight["label"]) == (
        True,
        "Outside the delivery window — it waits for the window to open",
    )
    assert (overnight["starts_at"], overnight["finishes_at"], overnight["window_end_at"]) == (
        "2026-11-25T14:00:00Z",
        "2026-11-25T14:58:00Z",
        "2026-11-25T22:00:00Z",
    )


def test_fire_then_list_runs_and_act_on_them(api, world, at):
    reminder = make_reminder(timezone=KL, start=9, end=18)
    at(KL_MORNING)

    fired = api.post(f"/api/reminders/{reminder.pk}/fire/")
    assert fired.status_code == 201, fired.json()
    run = fired.json()
    assert (run["status"], run["total"], run["pending"], run["reminder"]) == ("queued", 4, 4, reminder.pk)

    at(KL_MORNING, then=KL_AFTER_CLOSE, after=2)
    execute(ReminderRun.objects.get(pk=run["id"]))

    listed = api.get("/api/reminder-runs/", {"status": "paused"}).json()["results"]
    assert [item["id"] for item in listed] == [run["id"]]
    item = listed[0]
    assert {key: item[key] for key in ("status", "sent", "failed", "skipped", "pending", "total")} == {
        "status": "paused",
        "sent": 2,
        "failed": 0,
        "skipped": 0,
        "pending": 2,
        "total": 4,
    }
    assert item["error_summary"].startswith("Delivery window closed at 18:00 on Wed 25 Nov (Asia/Kuala_Lumpur). 2 of 4")
    assert api.get("/api/reminder-runs/", {"status": "success"}).json()["results"] == []
    assert api.get("/api/reminder-runs/", {"status": "nonsense"}).status_code == 400

    closed = api.post(f"/api/reminder-runs/{run['id']}/resume/")
    assert closed.status_code == 409 and "opens at 09:00" in closed.json()["message"]
    assert api.post(f"/api/reminder-runs/{run['id']}/retry-failed/").status_code == 409

    canceled = api.post(f"/api/reminder-runs/{run['id']}/cancel/")
    assert canceled.status_code == 200
    assert (canceled.json()["status"], canceled.json()["skipped"]) == ("partial", 2)
    targets = api.get(f"/api/reminder-runs/{run['id']}/targets/", {"status": "skipped"}).json()["results"]
    assert len(targets) == 2 and targets[0]["error"] == "canceled by operator"


def test_retry_failed_through_the_api(api, world, at):
    reminder = make_reminder(timezone=KL, start=9, end=18)
    at(KL_MORNING)
    run = execute(reminder_fire(reminder=reminder, enqueue=False))
    assert (run.status, run.failed) == (RunStatus.PARTIAL, 1)

    response = api.post(f"/api/reminder-runs/{run.pk}/retry-failed/")

    assert response.status_code == 200 and response.json()["status"] == "queued"
    assert response.json()["pending"] == 1 and response.json()["failed"] == 0
    assert execute(run).status == RunStatus.SUCCESS


def test_fire_outside_the_window_gives_a_run_waiting_for_it(api, world, at):
    reminder = make_reminder(timezone=KL, start=9, end=18)
    at(KL_AFTER_CLOSE)

    run = api.post(f"/api/reminders/{reminder.pk}/fire/").json()

    assert (run["status"], run["can_cancel"], run["can_resume"]) == ("waiting", True, False)
    assert "it starts by itself when the window opens, at 09:00 on Thu 26 Nov" in run["error_summary"]
    assert [listed["id"] for listed in api.get("/api/reminder-runs/", {"status": "waiting"}).json()["results"]] == [
        run["id"]
    ]


def test_delete(api, world):
    created = api.post("/api/reminders/", body(), format="json").json()

    assert api.delete(f"/api/reminders/{created['id']}/").status_code == 204
    assert not Reminder.objects.exists() and not PeriodicTask.objects.filter(name__startswith="reminder-").exists()


def test_the_schema_describes_the_reminder_endpoints(api):
    schema = api.get("/api/schema/", {"format": "json"}).json()

    for path in (
        "/api/reminders/",
        "/api/reminders/eta/",
        "/api/reminders/{id}/fire/",
        "/api/media/",
        "/api/reminder-runs/",
        "/api/reminder-runs/{id}/resume/",
        "/api/reminder-runs/{id}/cancel/",
        "/api/reminder-runs/{id}/retry-failed/",
    ):
        assert path in schema["paths"], path
