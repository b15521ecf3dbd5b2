"""Delivery windows in Chromium, the clock moved as the fan-out tests move it (core.clock): an overnight
window's run pauses at 06:00 and goes on by itself at 22:00; Send now outside the window says so before
confirming and the run waits for the window, then starts by itself. "By itself" is what beat runs every
minute (reminder_runs_auto_resume), called here at the moments beat would."""

from datetime import UTC, datetime

import pytest
from playwright.sync_api import expect

from core.models import RunStatus
from reminders.models import WAITING, ReminderRun
from reminders.services import reminder_runs_auto_resume
from tests.support.browser import log_in_as_operator, off_the_page_thread, top
from tests.support.reminders import execute, groups_world, make_reminder

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("fast_pace", "fresh_buckets")]


BERLIN = "Europe/Berlin"  # UTC+1 in November
TEN_TO_SIX = datetime(2026, 11, 26, 4, 50, tzinfo=UTC)  # 05:50 in Berlin: ten minutes of 22:00–06:00 left
SIX = datetime(2026, 11, 26, 5, 0, 1, tzinfo=UTC)  # 06:00:01
NOON = datetime(2026, 11, 26, 11, 0, tzinfo=UTC)  # 12:00
BEFORE_TEN_PM = datetime(2026, 11, 26, 20, 59, tzinfo=UTC)  # 21:59
TEN_PM = datetime(2026, 11, 26, 21, 0, 30, tzinfo=UTC)  # 22:00:30


def beat() -> list[int]:
    return off_the_page_thread(reminder_runs_auto_resume)


def test_an_overnight_run_pauses_at_six_and_goes_on_by_itself_at_ten_in_the_evening(
    live_server, transactional_db, fanout_world, at, enqueued, django_user_model, page, artifacts
):
    off_the_page_thread(lambda: fanout_world(groups_world(groups=10)))
    reminder = make_reminder(name="Night shift", timezone=BERLIN, start=22, end=6, auto_resume=True)
    at(TEN_TO_SIX)
    log_in_as_operator(page, live_server.url, django_user_model)
    page.goto(f"{live_server.url}/reminders/{reminder.pk}/")
    expect(page.locator(".detail-eta .eta-pill")).to_have_text("Fits in window")

    dialogs = []
    page.once("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.accept()))
    page.get_by_role("button", name="Send now").click()
    expect(page.locator(".messages")).to_contain_text("is sending “Night shift” to 10 groups")
    assert dialogs == ["Send “Night shift” now to 10 groups?"]
    run = ReminderRun.objects.get()
    assert enqueued == [run.pk]
    enqueued.clear()

    at(TEN_TO_SIX, then=SIX, after=4)  # four groups go out, then it is 06:00 in Berlin
    run = off_the_page_thread(lambda: execute(run))
    assert (run.status, run.sent, run.pending) == (RunStatus.PAUSED, 4, 6)
    banner = page.locator(f"#run-panel-{run.pk}")
    expect(banner).to_contain_text(f"Run #{run.pk} paused — 4 of 10 groups delivered", timeout=15_000)
    expect(banner).to_contain_text("Delivery window closed at 06:00 on Thu 26 Nov (Europe/Berlin).")
    expect(banner).to_contain_text("It resumes by itself when the window opens again, at 22:00 on Thu 26 Nov.")
    top(page)
    page.screenshot(path=artifacts / "reminders-overnight-paused-at-six.png", full_page=True)

    at(NOON)
    assert beat() == [], "closed all day"
    at(BEFORE_TEN_PM)
    assert beat() == [], "still closed at 21:59"
    at(TEN_PM)
    assert beat() == [run.pk] and enqueued == [run.pk], "22:00: beat resumes it"
    page.reload()
    expect(banner).to_have_class("run-panel run-panel--waiting")
    run = off_the_page_thread(lambda: execute(run))
    assert (run.status, run.sent, run.pending) == (RunStatus.SUCCESS, 10, 0)
    expect(banner).to_contain_text(f"Run #{run.pk} delivered to all 10 groups", timeout=15_000)
    top(page)
    page.screenshot(path=artifacts / "reminders-overnight-resumed-at-ten.png", full_page=True)


def test_send_now_outside_the_window_warns_then_the_run_waits_and_starts_when_it_opens(
    live_server, transactional_db, fanout_world, at, enqueued, django_user_model, page, artifacts
):
    off_the_page_thread(lambda: fanout_world(groups_world(groups=5)))
    reminder = make_reminder(name="Night shift", timezone=BERLIN, start=22, end=6)
    at(NOON)
    log_in_as_operator(page, live_server.url, django_user_model)
    page.goto(f"{live_server.url}/reminders/{reminder.pk}/")

    # The pill and the button say the same thing: it would wait until 22:00.
    pill = page.locator(".detail-eta .eta-pill")
    expect(pill).to_have_text("Outside the delivery window — it waits for the window to open")
    expect(pill).to_have_class("eta-pill eta-pill--wait")
    expect(page.locator(".detail-eta")).to_contain_text("22:00 today, when the window opens")
    start = page.get_by_role("button", name="Start when the window opens")
    expect(start).to_be_visible()
    top(page)
    page.screenshot(path=artifacts / "reminders-send-now-outside-window.png", full_page=True)

    # Dismissed: nothing happens.
    dialogs = []
    page.once("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    start.click()
    expect(start).to_be_enabled()
    assert dialogs == [
        "It is outside the delivery window 22:00–06:00 (Europe/Berlin); the run would wait until 22:00 today. "
        "Start “Night shift” for 5 groups when the window opens?"
    ]
    assert not ReminderRun.objects.exists()

    page.once("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.accept()))
    start.click()
    expect(page.locator(".messages")).to_contain_text("waits for the delivery window")
    run = ReminderRun.objects.get()
    assert run.status == WAITING and enqueued == [], "nothing is sent early"
    banner = page.locator(f"#run-panel-{run.pk}")
    expect(banner).to_contain_text(f"Run #{run.pk} waits for the delivery window — 5 groups to send")
    expect(banner).to_contain_text("it starts by itself when the window opens, at 22:00 on Thu 26 Nov")
    expect(page.locator(f"#run-{run.pk} .badge")).to_have_text("Waiting")
    top(page)
    page.screenshot(path=artifacts / "reminders-run-waiting-for-window.png", full_page=True)

    at(BEFORE_TEN_PM)
    assert beat() == []
    at(TEN_PM)
    assert beat() == [run.pk] and enqueued == [run.pk]
    run = off_the_page_thread(lambda: execute(run))
    assert (run.status, run.sent) == (RunStatus.SUCCESS, 5)
    page.reload()
    expect(banner).to_contain_text(f"Run #{run.pk} delivered to all 5 groups")
    top(page)
    page.screenshot(path=artifacts / "reminders-waiting-run-delivered.png", full_page=True)
