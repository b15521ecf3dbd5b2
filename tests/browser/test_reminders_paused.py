"""A run paused by its delivery window, in Chromium: the banner on the reminder's page → Resume → the run
finishes (the real fan-out, in this process) → the page shows it delivered, without a reload."""

import pytest
from playwright.sync_api import expect

from core.models import RunStatus
from reminders.models import ReminderRun
from reminders.services import reminder_fire
from tests.support.browser import log_in_as_operator, off_the_page_thread, top
from tests.support.reminders import (
    KL,
    KL_AFTER_CLOSE,
    KL_MORNING,
    KL_NEXT_MORNING,
    execute,
    groups_world,
    make_reminder,
)

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("fast_pace", "fresh_buckets")]

# The fixtures of the reminders tests: a world with logged-in accounts, the clock, a fast pace, fresh buckets.


def test_resume_a_paused_run_from_its_banner_until_it_is_delivered(
    live_server, transactional_db, fanout_world, at, enqueued, django_user_model, page, artifacts
):
    off_the_page_thread(lambda: fanout_world(groups_world(groups=10)))
    reminder = make_reminder(name="Flash sale", timezone=KL, start=9, end=18)
    at(KL_MORNING)
    run = reminder_fire(reminder=reminder)
    assert enqueued == [run.pk]
    enqueued.clear()
    at(KL_MORNING, then=KL_AFTER_CLOSE, after=4)  # 4 groups go out, then it is 18:00 in Kuala Lumpur
    run = off_the_page_thread(lambda: execute(run))
    assert (run.status, run.sent, run.pending) == (RunStatus.PAUSED, 4, 6)
    at(KL_NEXT_MORNING)  # the window is open again

    log_in_as_operator(page, live_server.url, django_user_model)
    page.get_by_role("link", name="Activity", exact=True).click()
    page.locator(".pill", has_text="Paused").click()
    row = page.locator("tbody tr", has_text="Flash sale")
    expect(row.locator(".badge")).to_have_text("Paused")
    expect(row.get_by_role("button", name=f"Resume run #{run.pk}")).to_be_visible()
    top(page)
    page.screenshot(path=artifacts / "reminders-activity-paused.png", full_page=True)

    row.get_by_role("link", name="Flash sale").click()
    banner = page.locator(f"#run-panel-{run.pk}")
    expect(banner).to_contain_text(f"Run #{run.pk} paused — 4 of 10 groups delivered")
    expect(banner).to_contain_text("Delivery window closed at 18:00 on Wed 25 Nov (Asia/Kuala_Lumpur).")
    expect(banner.get_by_role("button", name="Cancel run")).to_be_visible()
    top(page)
    page.screenshot(path=artifacts / "reminders-paused-banner.png", full_page=True)

    banner.get_by_role("button", name="Resume").click()
    expect(banner).to_contain_text("Resumed: 6 groups to go.")
    expect(banner).to_have_class("run-panel run-panel--waiting")
    expect(page.locator(f"#run-{run.pk} .badge")).to_have_text("Waiting")  # the history row, out of band
    assert enqueued == [run.pk]
    assert ReminderRun.objects.get(pk=run.pk).status == RunStatus.QUEUED
    top(page)
    page.screenshot(path=artifacts / "reminders-resumed.png", full_page=True)

    run = off_the_page_thread(lambda: execute(run))  # what the worker does with the queued run
    assert (run.status, run.sent, run.pending) == (RunStatus.SUCCESS, 10, 0)

    # The panel polls every 2 s and stops once the run is over.
    expect(banner).to_contain_text(f"Run #{run.pk} delivered to all 10 groups", timeout=15_000)
    expect(banner).to_have_class("run-panel run-panel--success")
    expect(banner.get_by_role("button", name="Resume")).to_have_count(0)
    expect(page.locator(f"#run-{run.pk} .badge")).to_have_text("Success")
    top(page)
    page.screenshot(path=artifacts / "reminders-success.png", full_page=True)

    banner.get_by_role("link", name="Every group of this run →").click()
    expect(page.get_by_role("heading", level=1)).to_have_text(f"Run #{run.pk} Success")
    expect(page.locator("tbody tr", has_text="Group 0009")).to_contain_text("Sent")
    top(page)
    page.screenshot(path=artifacts / "reminders-run.png", full_page=True)

    page.go_back()
    page.reload()
    expect(page.locator(f"#run-{run.pk} .badge")).to_have_text("Success")
    page.get_by_role("link", name="Activity", exact=True).click()
    expect(page.locator(f"#run-{run.pk}")).to_contain_text("Success")
    top(page)
    page.screenshot(path=artifacts / "reminders-activity.png", full_page=True)
