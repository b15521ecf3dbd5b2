"""Pause, Resume and Cancel on a run's page, in Chromium, while a real Celery worker sends it and its groups' slow
mode holds their second part: every action answers at once, the badge, the panel, the counters and every row agree,
no row of a stopped run says Sending, and the console stays clean (no out-of-band swap to an id the page lacks)."""

import os
import re
import signal
from pathlib import Path

import pytest
from playwright.sync_api import expect

from reminders.models import ReminderRun
from reminders.services import PartSpec, reminder_fire
from tests.support.browser import (
    SIZES,
    TEAM_PASSWORD,
    log_in_as,
    off_the_page_thread,
    quiet_page,
    screenshot,
    team_add,
)
from tests.support.processes import purge_queues, send_times, start_celery_worker, wait_for
from tests.support.reminders import groups_world, image, make_reminder

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("fast_pace", "fresh_buckets")]

SHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "run-actions"  # git-ignored, for a person to look at


def _badge(page):
    return page.locator("h1 .badge")


def _rows(page):
    return page.locator(".target-table tbody tr:not(.empty-row)")


def test_pause_resume_and_cancel_on_the_run_page_mid_slow_mode(
    live_server, transactional_db, fanout_world, settings, tmp_path, django_user_model, browser
):
    settings.MEDIA_ROOT = tmp_path / "media"
    world = off_the_page_thread(lambda: fanout_world(groups_world(groups=3, slow_mode=30)))
    team_add(django_user_model)
    reminder = make_reminder(
        name="Market day", parts=[PartSpec(text="**Stalls** open at nine"), PartSpec(album=(image(1), image(2)))]
    )
    purge_queues()
    worker = start_celery_worker(tmp_path)
    try:
        run = reminder_fire(reminder=reminder)
        wait_for(lambda: len(send_times(world, range(3))) >= 3, timeout=60, what="the first part in every group")
        SHOTS.mkdir(parents=True, exist_ok=True)
        with quiet_page(browser, size="wide") as page:
            log_in_as(page, live_server.url, "vera", TEAM_PASSWORD)
            page.on("dialog", lambda dialog: dialog.accept())
            page.goto(f"{live_server.url}/activity/runs/{run.pk}/")
            expect(_badge(page)).to_have_text("Running")
            expect(_rows(page).filter(has_text="1 of 2 parts")).to_have_count(3)

            page.get_by_role("button", name=f"Pause run #{run.pk}").click()
            expect(_badge(page)).to_have_text("Paused")
            expect(page.locator(".run-panel")).to_contain_text("Paused:")
            expect(_rows(page).locator(".badge")).to_have_text(["Pending"] * 3)

            page.get_by_role("button", name=f"Resume run #{run.pk}").click()
            expect(page.locator(".run-panel")).to_contain_text("Resumed: 3 groups to go.")
            expect(_badge(page)).to_have_text(re.compile("Waiting|Running"))
            expect(page.locator(".target-table .badge.target--sending").first).to_be_visible(timeout=15_000)  # polled

            page.get_by_role("button", name=f"Cancel run #{run.pk}").click()
            expect(_badge(page)).to_have_text("Canceled")
            summary = "Canceled by operator: 0 of 3 groups delivered, 3 skipped (3 of them part-way)."
            expect(page.locator(".run-panel-summary")).to_have_text(summary)
            expect(page.locator(".run-counts")).to_contain_text("0 sent")
            expect(page.locator(".run-counts")).to_contain_text("3 skipped")
            expect(_rows(page).locator(".badge")).to_have_text(["Skipped"] * 3)
            expect(_rows(page).filter(has_text="1 of 2 parts")).to_have_count(3)
            history = page.locator("#run-history")  # the page's History says what was done, without a reload
            expect(history).to_contain_text(f"vera cancelled Market day run #{run.pk}")
            expect(history).to_contain_text(f"vera paused Market day run #{run.pk}")
            screenshot(page, SHOTS / "run-canceled-operator-1440.png")
            page.set_viewport_size(SIZES["phone"])
            screenshot(page, SHOTS / "run-canceled-operator-390.png")

            page.reload()  # the same story after a reload
            expect(_badge(page)).to_have_text("Canceled")
            expect(page.locator(".run-panel-summary")).to_have_text(summary)
            expect(_rows(page).locator(".badge")).to_have_text(["Skipped"] * 3)
        run = ReminderRun.objects.get(pk=run.pk)
        assert (run.sent, run.skipped, run.pending) == (0, 3, 0)
        assert len(send_times(world, range(3))) == 3, "no album went out after Pause or Cancel"

        for size in ("wide", "phone"):
            with quiet_page(browser, size=size) as page:
                log_in_as(page, live_server.url, "victor", TEAM_PASSWORD)
                page.goto(f"{live_server.url}/activity/runs/{run.pk}/")
                expect(_badge(page)).to_have_text("Canceled")
                expect(page.get_by_role("button", name=re.compile("Resume|Cancel|Pause"))).to_have_count(0)
                screenshot(page, SHOTS / f"run-canceled-viewer-{SIZES[size]['width']}.png")
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)


@pytest.mark.parametrize("username", ["vera", "victor"])
def test_compose_at_both_sizes_for_an_operator_and_a_viewer(
    live_server, transactional_db, fanout_world, django_user_model, browser, username
):
    off_the_page_thread(lambda: fanout_world(groups_world(groups=2)))
    team_add(django_user_model)
    SHOTS.mkdir(parents=True, exist_ok=True)
    role = "operator" if username == "vera" else "viewer"
    with quiet_page(browser, size="wide") as page:
        log_in_as(page, live_server.url, username, TEAM_PASSWORD)
        for size in ("wide", "phone"):
            page.set_viewport_size(SIZES[size])
            page.goto(f"{live_server.url}/reminders/new/")
            expect(page.get_by_role("heading", name="New reminder")).to_be_visible()
            if role == "operator":
                page.get_by_role("button", name="Next: Groups →").click()
                expect(page.get_by_text("Give the reminder a name.")).to_be_visible()
                page.get_by_label("Name").fill("Market day")
                expect(page.get_by_text("Give the reminder a name.")).to_have_count(0)
                next_button = page.get_by_role("button", name="Next: Groups →").bounding_box()
                assert next_button["x"] + next_button["width"] <= SIZES[size]["width"], "the button fits the window"
            screenshot(page, SHOTS / f"compose-{role}-{SIZES[size]['width']}.png")
