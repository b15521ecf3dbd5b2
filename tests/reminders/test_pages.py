"""The Reminders and Activity pages through Django's test client (with HTMX headers), on a sandbox world;
runs go through the real fan-out in this process."""

import re
from datetime import UTC, datetime

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django_celery_beat.models import PeriodicTask

from core.models import RunStatus
from reminders.models import WAITING, MediaFile, Reminder, ReminderRun, TargetStatus
from reminders.services import PartSpec, reminder_fire
from tests.support.factories import work_queued
from tests.support.pages import HTMX, chat_pks, compose, current_step, htmx_post
from tests.support.reminders import (
    KL,
    KL_AFTER_CLOSE,
    KL_MORNING,
    KL_NEXT_MORNING,
    account,
    execute,
    group_id,
    groups_world,
    image,
    make_reminder,
    png_bytes,
)

pytestmark = pytest.mark.django_db

# 17:50 UTC: ten minutes before a 09:00–18:00 UTC window closes.
LATE_AFTERNOON = datetime(2026, 11, 25, 17, 50, tzinfo=UTC)


def visible_sections(html: str) -> list[str]:
    return re.findall(r'<section class="card step" aria-labelledby="step-(\w+)-title">', html)


@pytest.fixture
def pause_a_run(fanout_world, at):
    def pause(*, groups: int = 10, delivered: int = 4, faults=()) -> ReminderRun:
        fanout_world(groups_world(groups=groups, faults=faults))
        reminder = make_reminder(timezone=KL, start=9, end=18)
        at(KL_MORNING)
        run = reminder_fire(reminder=reminder)
        at(KL_MORNING, then=KL_AFTER_CLOSE, after=delivered)
        run = execute(run)
        assert run.status == RunStatus.PAUSED
        return run

    return pause


# Access ------------------------------------------------------------------------------------------------------------


def test_every_page_needs_a_login(client, fanout_world):
    fanout_world(groups_world(groups=2))
    reminder = make_reminder()
    run = reminder_fire(reminder=reminder, enqueue=False)
    for url in [
        reverse("reminders:list"),
        reverse("reminders:compose"),
        reverse("reminders:detail", args=[reminder.pk]),
        reverse("reminders:edit-when", args=[reminder.pk]),
        reverse("reminders:activity"),
        reverse("reminders:activity-run", args=[run.pk]),
        reverse("reminders:activity-run-row", args=[run.pk]),
    ]:
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("login")), url
    response = client.post(reverse("reminders:activity-resume", args=[run.pk]), **HTMX)
    assert response.status_code == 302
    assert ReminderRun.objects.get(pk=run.pk).status == RunStatus.QUEUED


# The list ----------------------------------------------------------------------------------------------------------


def test_the_list_shows_the_schedule_in_words_the_window_and_the_last_run(operator, fanout_world, at):
    fanout_world(groups_world(groups=3))
    reminder = make_reminder(name="Morning promo", timezone=KL, start=9, end=18, schedule_crontab="0 9 * * 1-5")
    make_reminder(name="By hand")
    at(KL_MORNING)
    execute(reminder_fire(reminder=reminder))

    page = operator.get(reverse("reminders:list")).content.decode()

    row = re.search(rf'<tr id="reminder-{reminder.pk}">.*?</tr>', page, re.S).group(0)
    assert "At 09:00, Monday through Friday" in row and "0 9 * * 1-5" in row
    assert "Asia/Kuala_Lumpur" in row and "09:00–18:00" in row
    assert "3 groups · 1 part" in row
    assert "outcome--success" in row and "Success" in row and "3/3" in row
    assert 'name="enabled" role="switch"' in row and " checked" in row
    assert "Send now" in row
    assert "Manual: only when you press Send now" in page
    assert "never sent" in page


def test_the_switch_turns_the_schedule_off_and_on(operator, fanout_world):
    fanout_world(groups_world(groups=2))
    reminder = make_reminder(schedule_crontab="0 9 * * *")
    url = reverse("reminders:enabled", args=[reminder.pk])

    row = htmx_post(operator, url, {})  # an unticked checkbox posts nothing

    reminder.refresh_from_db()
    assert not reminder.enabled and not PeriodicTask.objects.get(pk=reminder.periodic_task_id).enabled
    assert row.startswith(f'<tr id="reminder-{reminder.pk}"') and "Off: no more sends." in row

    htmx_post(operator, url, {"enabled": "on"})
    reminder.refresh_from_db()
    assert reminder.enabled and PeriodicTask.objects.get(pk=reminder.periodic_task_id).enabled


def test_send_now_fires_a_run_and_opens_the_reminder(operator, fanout_world, django_capture_on_commit_callbacks):
    fanout_world(groups_world(groups=3))
    reminder = make_reminder()

    with django_capture_on_commit_callbacks() as callbacks:
        response = operator.post(reverse("reminders:send-now", args=[reminder.pk]), **HTMX)

    assert response["HX-Redirect"] == reverse("reminders:detail", args=[reminder.pk])
    run = ReminderRun.objects.get(reminder=reminder)
    assert (run.status, run.total, run.pending) == (RunStatus.QUEUED, 3, 3)
    assert len(work_queued(callbacks)) == 1, "the run is enqueued"
    page = operator.get(response["HX-Redirect"]).content.decode()
    assert f"Run #{run.pk} is sending “Weekly promo” to 3 groups." in page
    assert f'hx-get="{reverse("reminders:activity-run-panel", args=[run.pk])}?also=row" hx-trigger="every 2s"' in page


def test_send_now_outside_the_window_says_so_and_starts_when_it_opens(operator, fanout_world, at):
    fanout_world(groups_world(groups=2))
    reminder = make_reminder(timezone=KL, start=22, end=6)
    at(KL_MORNING)  # 10:00 in Kuala Lumpur

    page = operator.get(reverse("reminders:detail", args=[reminder.pk])).content.decode()

    assert "Start when the window opens" in page and '<span class="when-idle">Send now</span>' not in page
    confirm = re.search(r'hx-confirm="([^"]*)"', page).group(1)
    assert confirm.startswith(
        "It is outside the delivery window 22:00–06:00 (Asia/Kuala_Lumpur); the run would wait until 22:00 today."
    ), confirm
    assert "eta-pill--wait" in page and "<dt>Starts</dt><dd>22:00 today, when the window opens</dd>" in page, (
        "the pill says what the confirm says"
    )
    listed = operator.get(reverse("reminders:list")).content.decode()
    assert "Start when the window opens" in listed and confirm in listed

    response = operator.post(reverse("reminders:send-now", args=[reminder.pk]), follow=True)

    run = ReminderRun.objects.get(reminder=reminder)
    assert run.status == WAITING
    page = response.content.decode()
    assert f"Run #{run.pk} waits for the delivery window." in page and 'class="badge outcome--waiting"' in page
    assert f'hx-get="{reverse("reminders:activity-run-panel", args=[run.pk])}?also=row" hx-trigger="every 30s"' in page
    assert operator.get(reverse("reminders:activity-run-panel", args=[run.pk])).status_code == 200, "still polled"
    activity = operator.get(reverse("reminders:activity"), {"status": "waiting"}).content.decode()
    assert f'id="run-{run.pk}"' in activity and "Waiting: for the delivery window" in activity


def test_send_now_confirmed_before_the_window_opened_does_not_turn_into_something_else(operator, fanout_world, at):
    fanout_world(groups_world(groups=2))
    reminder = make_reminder(timezone=KL, start=22, end=6)
    at(datetime(2026, 11, 25, 13, 59, tzinfo=UTC))  # 21:59 in Kuala Lumpur: the page offers to wait
    page = operator.get(reverse("reminders:detail", args=[reminder.pk])).content.decode()
    assert 'name="waits" value="yes"' in page

    at(datetime(2026, 11, 25, 14, 0, 30, tzinfo=UTC))  # the window opened before the click
    response = operator.post(reverse("reminders:send-now", args=[reminder.pk]), {"waits": "yes"}, follow=True)

    assert "The delivery window opened or closed since this page was shown" in response.content.decode()
    assert not ReminderRun.objects.exists()
    operator.post(reverse("reminders:send-now", args=[reminder.pk]), {"waits": "no"})
    assert ReminderRun.objects.get().status == RunStatus.QUEUED


def test_inside_the_window_send_now_asks_plainly(operator, fanout_world, at):
    fanout_world(groups_world(groups=2))
    reminder = make_reminder(timezone=KL, start=22, end=6)
    at(datetime(2026, 11, 25, 15, 0, tzinfo=UTC))  # 23:00 in Kuala Lumpur

    page = operator.get(reverse("reminders:detail", args=[reminder.pk])).content.decode()

    assert 'hx-confirm="Send “Weekly promo” now to 2 groups?"' in page and "Start when the window opens" not in page
    assert "eta-pill--fits" in page


# Compose -----------------------------------------------------------------------------------------------------------


def test_the_compose_page_starts_at_the_message_with_the_other_steps_hidden(operator, fanout_world):
    fanout_world(groups_world(groups=3))

    page = operator.get(reverse("reminders:compose")).content.decode()

    assert current_step(page) == "message"
    assert visible_sections(page) == ["message"]
    assert 'aria-labelledby="step-groups-title" hidden' in page
    for label in ("Message", "Groups", "When", "Review"):
        assert f"</span>{label}" in page
    assert "Group 0000" in page, "the groups of the default account are listed"
    assert 'hx-post="/reminders/eta/" hx-trigger="change delay:150ms from:closest form"' in page


def test_next_checks_the_step_and_names_what_is_missing(operator, fanout_world):
    fanout_world(groups_world(groups=3))
    url = reverse("reminders:compose")

    html = htmx_post(operator, url, compose(name="", **{"part-0-text": ""}, action="goto-groups"))

    assert current_step(html) == "message"
    assert "Give the reminder a name." in html
    assert "Write the text, or remove this part." in html

    html = htmx_post(operator, url, compose(action="goto-groups"))
    assert current_step(html) == "groups" and visible_sections(html) == ["groups"]

    html = htmx_post(operator, url, compose(step="groups", targets=[], action="goto-when"))
    assert current_step(html) == "groups" and "Pick at least one group or audience." in html


def test_parts_are_added_moved_and_removed_in_place(operator, fanout_world):
    fanout_world(groups_world(groups=2))
    url = reverse("reminders:compose")
    data = compose(part=["0", "1"], **{"part-1-kind": "text", "part-1-text": "Second"})

    html = htmx_post(operator, url, data | {"action": "add-text"})
    assert html.count('name="part" value=') == 3

    html = htmx_post(operator, url, data | {"action": "up-1"})
    assert html.index(">Second</textarea>") < html.index(">Big sale today</textarea>")

    html = htmx_post(operator, url, data | {"action": "remove-0"})
    assert html.count('name="part" value=') == 1 and "Big sale today" not in html and ">Second<" in html
    assert current_step(html) == "message"


def test_a_media_part_is_uploaded_once_and_kept_by_id(operator, fanout_world):
    fanout_world(groups_world(groups=2))
    url = reverse("reminders:compose")
    data = compose(part=["0", "1"], **{"part-1-kind": "media", "part-1-caption": "This week"})
    upload = SimpleUploadedFile("promo.png", png_bytes(3), content_type="image/png")

    html = htmx_post(operator, url, data | {"action": "upload", "part-1-file": upload})

    media = MediaFile.objects.get()
    assert (media.name, media.mime_type, media.size) == ("promo.png", "image/png", len(png_bytes(3)))
    assert f'name="part-1-media" value="{media.pk}"' in html and "promo.png" in html
    assert ">This week</textarea>" in html

    empty = SimpleUploadedFile("empty.png", b"", content_type="image/png")
    html = htmx_post(operator, url, data | {"action": "upload", "part-1-file": empty})
    assert "Choose a picture or file to upload." in html or "The file is empty." in html
    assert MediaFile.objects.count() == 1


def test_a_window_that_opens_and_closes_at_the_same_hour_is_refused_under_its_field(operator, fanout_world):
    fanout_world(groups_world(groups=2))

    html = htmx_post(
        operator,
        reverse("reminders:compose"),
        compose(step="when", window_start_hour="9", window_end_hour="9", action="goto-review"),
    )

    assert current_step(html) == "when"
    field = re.search(r'<div class="field has-error">\s*<label for="id_window_end_hour">.*?</div>', html, re.S)
    assert field, "the error is under the window's end"
    assert "for all day choose 00:00–24:00" in field.group(0)
    assert not Reminder.objects.exists()


def test_an_overnight_window_is_accepted(operator, fanout_world):
    fanout_world(groups_world(groups=2))

    response = operator.post(
        reverse("reminders:compose"),
        compose(step="review", window_start_hour="22", window_end_hour="6", crontab="30 23 * * *", action="save"),
        **HTMX,
    )

    reminder = Reminder.objects.get()
    assert response["HX-Redirect"] == reverse("reminders:detail", args=[reminder.pk])
    assert (reminder.window_start_hour, reminder.window_end_hour) == (22, 6)


def test_an_unknown_time_zone_and_a_bad_crontab_are_named(operator, fanout_world):
    fanout_world(groups_world(groups=2))

    html = htmx_post(
        operator,
        reverse("reminders:compose"),
        compose(step="when", timezone="Mars/Olympus", crontab="61 9 * * *", action="goto-review"),
    )

    assert current_step(html) == "when"
    assert "&#x27;Mars/Olympus&#x27; is not an IANA time zone" in html
    assert "is not a valid crontab" in html


def test_schedule_saves_the_reminder_with_its_beat_task(operator, fanout_world):
    fanout_world(groups_world(groups=3))
    url = reverse("reminders:compose")

    review = htmx_post(operator, url, compose(step="when", action="goto-review"))
    assert current_step(review) == "review" and visible_sections(review) == ["review"]
    assert "At 09:00, Monday through Friday" in review and "Schedule reminder" in review
    assert "eta-pill--" in review

    response = operator.post(url, compose(step="review", action="save"), **HTMX)

    reminder = Reminder.objects.get()
    assert response["HX-Redirect"] == reverse("reminders:detail", args=[reminder.pk])
    assert (reminder.name, reminder.timezone, reminder.schedule_crontab) == ("Weekly promo", "UTC", "0 9 * * 1-5")
    assert reminder.targets.count() == 3 and [p.text for p in reminder.parts.all()] == ["Big sale today"]
    assert PeriodicTask.objects.get(pk=reminder.periodic_task_id).enabled


def test_a_one_off_time_is_read_in_the_reminders_time_zone(operator, fanout_world, at):
    fanout_world(groups_world(groups=2))
    at(KL_MORNING)

    operator.post(
        reverse("reminders:compose"),
        compose(step="review", timezone=KL, schedule="once", at="2026-11-26T10:30", action="save"),
        **HTMX,
    )

    reminder = Reminder.objects.get()
    assert reminder.schedule_at == datetime(2026, 11, 26, 2, 30, tzinfo=UTC), "10:30 in Kuala Lumpur"
    assert reminder.schedule_crontab == ""


def test_save_with_an_error_goes_back_to_its_step(operator, fanout_world):
    fanout_world(groups_world(groups=2))

    html = htmx_post(operator, reverse("reminders:compose"), compose(step="review", targets=[], action="save"))

    assert current_step(html) == "groups" and "Pick at least one group or audience." in html
    assert not Reminder.objects.exists()


def test_without_htmx_the_form_answers_with_the_whole_page(operator, fanout_world):
    fanout_world(groups_world(groups=2))

    response = operator.post(reverse("reminders:compose"), compose(action="goto-groups"))

    page = response.content.decode()
    assert response.status_code == 200 and "<html" in page and current_step(page) == "groups"
    response = operator.post(reverse("reminders:compose"), compose(step="review", action="save"))
    assert response.status_code == 302 and response.url == reverse("reminders:detail", args=[Reminder.objects.get().pk])


# The ETA pill ------------------------------------------------------------------------------------------------------


def eta(client, **changes) -> str:
    return htmx_post(client, reverse("reminders:eta"), compose(**changes))


def test_the_eta_pill_is_green_when_the_run_fits_and_amber_when_it_would_pause(operator, fanout_world, at, settings):
    fanout_world(groups_world(groups=12))
    settings.REMINDER_MAX_SEND_PER_MINUTE = 1
    at(LATE_AFTERNOON)

    # 12 groups × 1 part at 1 a minute: 12 min + 15 % = 14 min; the window closes in 10.
    amber = eta(operator, schedule="manual")
    assert amber.lstrip().startswith("<h2>Summary</h2>")
    assert "eta-pill--pause" in amber and "Likely to pause — widen the window or split into smaller runs" in amber
    assert "≈ 14 min" in amber and "If sent now" in amber and "≈ 18:04" in amber and "18:00" in amber

    green = eta(operator, schedule="manual", window_end_hour="20")
    assert "eta-pill--fits" in green and "Fits in window" in green

    fewer = eta(operator, schedule="manual", targets=[str(pk) for pk in chat_pks(5)])
    assert "eta-pill--fits" in fewer and "≈ 6 min" in fewer


def test_the_eta_follows_the_schedule_and_shows_the_observed_rate(operator, fanout_world, at, settings):
    fanout_world(groups_world(groups=4))
    settings.REMINDER_MAX_SEND_PER_MINUTE = 40
    at(LATE_AFTERNOON)

    html = eta(operator, crontab="0 9 * * *")
    assert "Next send" in html and "Thu 26 Nov, 09:00" in html and "eta-pill--fits" in html
    assert "Observed" not in html

    outside = eta(operator, crontab="0 20 * * *", window_end_hour="24", window_start_hour="21")
    assert "eta-pill--wait" in outside and "<dt>Starts</dt><dd>21:00 today, when the window opens</dd>" in outside

    run = execute(reminder_fire(reminder=make_reminder(start=0, end=24)))
    assert run.messages_sent == 4
    html = eta(operator, crontab="0 9 * * *")
    assert "Observed in this account's recent runs: <strong>" in html


def test_the_eta_never_fails_on_what_is_half_typed(operator, fanout_world):
    fanout_world(groups_world(groups=2))

    for changes in (
        {"timezone": "Nowhere/Land"},
        {"window_start_hour": "20", "window_end_hour": "8"},
        {"window_start_hour": "x"},
        {"crontab": "every day"},
        {"schedule": "once", "at": ""},
        {"targets": []},
        {"account": ""},
    ):
        html = eta(operator, **changes)
        assert "<h2>Summary</h2>" in html and "eta-pill" in html, changes
    assert "No estimate yet" in eta(operator, targets=[])


def test_a_form_with_more_than_a_thousand_groups_ticked_goes_through(operator, fanout_world):
    fanout_world(groups_world(groups=2))
    many = [str(pk) for pk in chat_pks()] + [str(10_000_000 + n) for n in range(1_200)]  # unknown ids are ignored

    html = eta(operator, targets=many)

    assert "<dt>Groups</dt><dd>2</dd>" in html


# Edit pages --------------------------------------------------------------------------------------------------------


def test_edit_when_refuses_a_crontab_outside_its_window_and_keeps_the_reminder(operator, fanout_world):
    fanout_world(groups_world(groups=2))
    reminder = make_reminder(start=9, end=18, schedule_crontab="0 9 * * *")
    url = reverse("reminders:edit-when", args=[reminder.pk])

    page = operator.get(url).content.decode()
    assert 'name="window_start_hour"' in page and 'name="targets"' not in page and 'id="eta-panel"' in page
    data = {"timezone": "UTC", "window_start_hour": "18", "window_end_hour": "9", "schedule": "crontab"}
    html = htmx_post(operator, url, data | {"crontab": "0 9 * * *", "enabled": "on", "action": "save"})

    assert "The crontab never fires inside the delivery window 18:00–09:00." in html
    reminder.refresh_from_db()
    assert (reminder.window_start_hour, reminder.window_end_hour) == (9, 18)

    response = operator.post(url, data | {"window_start_hour": "8", "crontab": "0 8 * * *", "action": "save"}, **HTMX)
    assert response["HX-Redirect"] == reverse("reminders:detail", args=[reminder.pk])
    reminder.refresh_from_db()
    assert (reminder.window_start_hour, reminder.schedule_crontab, reminder.enabled) == (8, "0 8 * * *", False)


def test_edit_groups_replaces_the_targets_and_its_pill_counts_them(operator, fanout_world, settings):
    fanout_world(groups_world(groups=4, forum=True))
    reminder = make_reminder(groups=1)
    url = reverse("reminders:edit-groups", args=[reminder.pk])
    pks = chat_pks()

    page = operator.get(url).content.decode()
    assert page.count('name="targets"') == 4 and page.count(" checked") >= 1
    panel = htmx_post(
        operator, reverse("reminders:eta"), {"reminder": reminder.pk, "section": "groups", "targets": pks[:3]}
    )
    assert "<dt>Groups</dt><dd>3</dd>" in panel and "<dt>Parts</dt><dd>1</dd>" in panel

    bad = htmx_post(operator, url, {"targets": pks[:2], f"topic-{pks[0]}": "news", "action": "save"})
    assert "pick one of its topics, or General" in bad
    unknown = htmx_post(operator, url, {"targets": pks[:2], f"topic-{pks[0]}": "8", "action": "save"})
    assert "has no topic 8; pick one of its topics" in unknown
    assert '<option value="8" selected>Unknown topic 8</option>' in unknown, "the form keeps what was picked"

    operator.post(url, {"targets": pks[:2], f"topic-{pks[0]}": "7", "action": "save"}, **HTMX)
    targets = sorted(reminder.targets.values_list("chat_id", "topic_id"))
    assert targets == sorted([(pks[0], 7), (pks[1], None)])


def test_edit_message_keeps_the_account_and_replaces_the_parts(operator, fanout_world):
    fanout_world(groups_world(groups=2))
    media = image(1)
    reminder = make_reminder(parts=[PartSpec(text="Old"), PartSpec(media=media, caption="Pic")])
    url = reverse("reminders:edit-message", args=[reminder.pk])

    page = operator.get(url).content.decode()
    assert 'name="account"' not in page and f'name="part-1-media" value="{media.pk}"' in page

    data = {
        "name": "Renamed",
        "part": ["0", "1"],
        "part-0-kind": "media",
        "part-0-media": str(media.pk),
        "part-0-caption": "Pic first",
        "part-1-kind": "text",
        "part-1-text": "New text",
        "action": "save",
    }
    operator.post(url, data, **HTMX)

    reminder.refresh_from_db()
    assert reminder.name == "Renamed" and reminder.account == account()
    assert [(p.media_id, p.caption, p.text) for p in reminder.parts.all()] == [
        (media.pk, "Pic first", ""),
        (None, "", "New text"),
    ]


# The reminder's page: the paused banner, Resume, Cancel ----------------------------------------------------------


def test_a_paused_run_shows_its_banner_with_resume_and_cancel(operator, pause_a_run):
    run = pause_a_run()

    page = operator.get(reverse("reminders:detail", args=[run.reminder_id])).content.decode()

    banner = re.search(
        rf'<section id="run-panel-{run.pk}" class="run-panel run-panel--paused".*?</section>', page, re.S
    )
    assert banner, "the paused banner"
    banner = banner.group(0)
    assert f"Run #{run.pk} paused — 4 of 10 groups delivered" in banner
    assert "Delivery window closed at 18:00 on Wed 25 Nov (Asia/Kuala_Lumpur)." in banner
    assert ">Resume<" in banner and "Cancel run" in banner and "Retry failed" not in banner
    assert "hx-trigger" not in banner.split(">", 1)[0], "a paused run is not polled"


def test_resume_from_the_banner_queues_the_same_run_and_polls_it_to_success(
    operator, pause_a_run, at, django_capture_on_commit_callbacks
):
    run = pause_a_run()
    at(KL_NEXT_MORNING)

    with django_capture_on_commit_callbacks() as callbacks:
        # the reminder's page shows this run's history row beside its panel, and its forms say so
        page = operator.get(reverse("reminders:detail", args=[run.reminder_id])).content.decode()
        assert page.count('<input type="hidden" name="also" value="row">') == 2  # Resume, Cancel
        panel = htmx_post(operator, reverse("reminders:activity-resume", args=[run.pk]), {"as": "panel", "also": "row"})

    assert len(work_queued(callbacks)) == 1, "the run is enqueued again"
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED
    assert panel.startswith(f'<section id="run-panel-{run.pk}" class="run-panel run-panel--waiting"')
    assert "Resumed: 6 groups to go." in panel and 'hx-trigger="every 2s"' in panel
    assert f'<tr id="run-{run.pk}" class="run-row" hx-swap-oob="true"' in panel, "its history row changes too"
    assert 'name="also" value="row"' in panel, "the panel's next action says so again"
    assert f"/activity/runs/{run.pk}/panel/?also=row" in panel, "and so does the panel its polling brings"
    polled = operator.get(reverse("reminders:activity-run-panel", args=[run.pk]), {"also": "row"}).content.decode()
    assert 'name="also" value="row"' in polled

    execute(run)
    response = operator.get(reverse("reminders:activity-run-panel", args=[run.pk]))
    assert response.status_code == 286, "polling stops"
    assert f"Run #{run.pk} delivered to all 10 groups" in response.content.decode()


def test_resume_while_the_window_is_closed_says_when_it_opens(operator, pause_a_run, at):
    run = pause_a_run()
    at(KL_AFTER_CLOSE)

    panel = htmx_post(operator, reverse("reminders:activity-resume", args=[run.pk]), {"as": "panel"})

    assert "The delivery window 09:00–18:00 is closed; it opens at 09:00 tomorrow (Asia/Kuala_Lumpur)." in panel
    assert 'class="alert alert--error"' in panel
    assert ReminderRun.objects.get(pk=run.pk).status == RunStatus.PAUSED


def test_cancel_skips_what_is_pending_and_ends_the_run_canceled(operator, pause_a_run):
    run = pause_a_run()

    panel = htmx_post(operator, reverse("reminders:activity-cancel", args=[run.pk]), {"as": "panel"})

    run.refresh_from_db()
    assert (run.status, run.sent, run.skipped, run.pending) == (RunStatus.PARTIAL, 4, 6, 0)
    assert "Canceled: 6 groups skipped." in panel and "run-panel--canceled" in panel
    assert f"Run #{run.pk} canceled — 4 of 10 groups delivered" in panel
    assert run.targets.filter(status=TargetStatus.SKIPPED, error="canceled by operator").count() == 6


def test_retry_failed_is_offered_when_groups_failed(operator, fanout_world, at):
    fanout_world(groups_world(groups=3, faults=[{"op": "send", "chat": group_id(1), "error": "write_forbidden"}]))
    run = execute(reminder_fire(reminder=make_reminder()))
    assert (run.status, run.failed) == (RunStatus.PARTIAL, 1)

    page = operator.get(reverse("reminders:detail", args=[run.reminder_id])).content.decode()
    assert "Retry failed" in page and "Group 0001" in page, "the failed group and why"

    panel = htmx_post(operator, reverse("reminders:activity-retry-failed", args=[run.pk]), {"as": "panel"})
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and "Retrying 1 failed group." in panel
    assert execute(run).status == RunStatus.SUCCESS


def test_a_reminder_with_a_running_run_cannot_be_deleted(operator, fanout_world):
    fanout_world(groups_world(groups=2))
    reminder = make_reminder()
    run = reminder_fire(reminder=reminder, enqueue=False)
    ReminderRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)

    response = operator.post(reverse("reminders:delete", args=[reminder.pk]), follow=True)
    assert "is running; cancel it first" in response.content.decode()
    assert Reminder.objects.filter(pk=reminder.pk).exists()

    ReminderRun.objects.filter(pk=run.pk).update(status=RunStatus.SUCCESS)
    response = operator.post(reverse("reminders:delete", args=[reminder.pk]), **HTMX)
    assert response["HX-Redirect"] == reverse("reminders:list")
    assert not Reminder.objects.exists()


# Activity ----------------------------------------------------------------------------------------------------------


def test_activity_filters_by_status_and_resumes_paused_rows_inline(operator, pause_a_run, at):
    paused = pause_a_run()
    at(KL_MORNING)
    done = execute(reminder_fire(reminder=make_reminder(name="Other", timezone=KL, start=9, end=18)))
    assert done.status == RunStatus.SUCCESS

    page = operator.get(reverse("reminders:activity")).content.decode()
    assert f'id="run-{paused.pk}"' in page and f'id="run-{done.pk}"' in page
    assert re.search(r"Paused <span class=\"pill-count\">1</span>", page)
    assert re.search(r"Success <span class=\"pill-count\">1</span>", page)

    page = operator.get(reverse("reminders:activity"), {"status": "paused"}).content.decode()
    assert f'id="run-{paused.pk}"' in page and f'id="run-{done.pk}"' not in page
    assert f'aria-label="Resume run #{paused.pk}"' in page

    at(KL_NEXT_MORNING)
    row = htmx_post(operator, reverse("reminders:activity-resume", args=[paused.pk]), {"as": "row"})
    assert row.startswith(f'<tr id="run-{paused.pk}" class="run-row" hx-get=')
    assert "Resumed: 6 groups to go." in row


def test_a_running_row_polls_until_its_run_is_over(operator, fanout_world):
    fanout_world(groups_world(groups=3))
    run = reminder_fire(reminder=make_reminder(), enqueue=False)
    ReminderRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, sent=1, pending=2)
    url = reverse("reminders:activity-run-row", args=[run.pk])

    running = operator.get(url)
    assert running.status_code == 200
    html = running.content.decode()
    assert f'hx-get="{url}" hx-trigger="every 2s"' in html
    assert "<strong>1</strong> sent" in html and "<strong>2</strong> pending" in html and 'data-bar-width="33"' in html

    execute(run)
    over = operator.get(url)
    assert over.status_code == 286 and "hx-trigger" not in over.content.decode()


def test_the_run_page_lists_its_groups_by_status(operator, fanout_world):
    fanout_world(groups_world(groups=3, faults=[{"op": "send", "chat": group_id(2), "error": "write_forbidden"}]))
    run = execute(reminder_fire(reminder=make_reminder()))

    page = operator.get(reverse("reminders:activity-run", args=[run.pk]), {"status": "failed"}).content.decode()

    assert "Group 0002" in page and "Group 0000" not in page.split("target-table", 1)[1]
    assert "target--failed" in page


def test_a_runs_groups_name_their_forum_topic(operator, fanout_world):
    fanout_world(groups_world(groups=2, forum=True))
    news, general = account().chats.order_by("telegram_id")
    reminder = make_reminder(chats=[news, general])
    reminder.targets.filter(chat=news).update(topic_id=7)
    run = execute(reminder_fire(reminder=reminder))

    page = operator.get(reverse("reminders:activity-run", args=[run.pk])).content.decode()

    assert f'{news.title} <span class="muted small">/ News</span>' in page
    assert "topic 7" not in page


def test_an_action_answers_with_no_out_of_band_part_the_page_does_not_have(operator, pause_a_run, at):
    """Activity shows rows only, a run's page its live part only: an out-of-band panel or row there would be an
    htmx:oobErrorNoTarget in the console."""
    run = pause_a_run()
    at(KL_NEXT_MORNING)
    activity = operator.get(reverse("reminders:activity")).content.decode()
    assert '<input type="hidden" name="also" value="">' in activity

    row = htmx_post(operator, reverse("reminders:activity-pause", args=[run.pk]), {"as": "row", "also": ""})
    assert "hx-swap-oob" not in row and row.startswith(f'<tr id="run-{run.pk}"')

    live = htmx_post(operator, reverse("reminders:activity-resume", args=[run.pk]), {"as": "page"})
    assert live.startswith('<div id="run-live"') and "hx-swap-oob" not in live
    assert "outcome--waiting" in live and "Resumed: 6 groups to go." in live
