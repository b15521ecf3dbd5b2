"""The operator's two main journeys, end to end in Chromium, with a screenshot at every step in test-artifacts/.

1. Ingestion: log in → add a sandbox account → its code → link a channel (a source with the account as its
   reader, and a destination) → Ingest now, worked by a real Celery worker → the package is on the Packages
   page → the set whose downloads kept failing is on the Skipped page → Retry runs it now → it is a package.
2. Reminders: compose → the ETA pill is amber → widen the window → green → Schedule → Send now → the window
   closes mid-run → the paused banner → Resume → the run succeeds.
"""

import re
from datetime import UTC, datetime

import pytest
from django.conf import settings
from playwright.sync_api import expect

from core.models import RunStatus
from core.workers import worker_id
from ingestion.models import IngestionRun, SkippedPackage
from packages.models import Package
from reminders.models import Reminder, ReminderRun
from tests.support.browser import Shots, celery_worker, log_in_as_superuser, off_the_page_thread
from tests.support.reminders import execute, groups_world

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("fast_pace", "fresh_buckets")]

# Journey 1 -------------------------------------------------------------------------------------------------------

READER = "+15550000001"
SOURCE = 1001
DESTINATION = 9000
DRAGON = 11  # goes through at once
CASTLE = 12  # its download keeps failing until the retries run out: skipped, then retried


def ingestion_world() -> dict:
    """One account, a member of the source channel and an admin (so a possible writer) of the destination."""
    return {
        "accounts": [{"phone": READER, "first_name": "Reader", "last_name": "A", "code": "12345"}],
        "chats": [
            {
                "id": SOURCE,
                "title": "Models A",
                "type": "channel",
                "members": [READER],
                "messages": [
                    {
                        "id": DRAGON,
                        "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 40_000}]},
                    },
                    {
                        "id": CASTLE,
                        "document": {"name": "castle.zip", "archive": [{"path": "castle/tower.stl", "size": 30_000}]},
                    },
                ],
            },
            {
                "id": DESTINATION,
                "title": "Archive",
                "type": "channel",
                "members": [READER],
                "admins": [READER],
                "messages": [],
            },
        ],
        # A network failure on every attempt of the first run: one more than the cycle retries.
        "faults": [
            {
                "op": "download",
                "chat": SOURCE,
                "message": CASTLE,
                "error": "network",
                "times": settings.INGEST_TRANSIENT_RETRIES + 1,
            }
        ],
    }


def ingest_now_and_wait(page, shot: Shots, step: str, ending: str = "Success"):
    """Runs page → Ingest now (all accounts) → the worker picks the run up → its row polls until it is over."""
    page.get_by_role("navigation").get_by_role("link", name="Runs").click()
    page.get_by_role("button", name="Ingest now").click()
    expect(page.locator(".messages")).to_contain_text("Queued 1 run: Reader A.")
    row = page.locator(".run-table tbody tr:not(.empty-row)").first
    shot(f"{step}-queued")
    expect(row.locator(".badge")).to_have_text(ending, timeout=30_000)
    shot(f"{step}-done")
    return row


@pytest.mark.processes
def test_journey_ingestion_from_a_new_account_to_a_retried_package(
    live_server, transactional_db, sandbox, settings, tmp_path, django_user_model, page, artifacts
):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"
    sandbox(ingestion_world())
    shot = Shots(page, artifacts, "journey1")

    with celery_worker(tmp_path) as worker:  # it starts while the operator logs in
        log_in_as_superuser(page, live_server.url, django_user_model, shot)
        shot("dashboard")

        # Add the account: phone, then the login code Telegram (the sandbox) sent it.
        page.get_by_role("navigation").get_by_role("link", name="Accounts").click()
        page.get_by_role("link", name="Add account").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_label("Phone number").fill(READER)
        shot("add-account")
        dialog.get_by_role("button", name="Send login code").click()
        expect(dialog.get_by_role("heading", name="Enter the login code")).to_be_visible()
        dialog.get_by_label("Login code").fill("12345")
        shot("login-code")
        dialog.get_by_role("button", name="Log in").click()
        expect(page.get_by_role("dialog")).to_have_count(0)
        account_row = page.locator("#account-rows tr", has_text=READER)
        expect(account_row.locator(".badge", has_text="Authenticated")).to_be_visible()
        account_row.get_by_role("button", name="Refresh chats").click()
        expect(account_row.get_by_text("Found 2 chats.")).to_be_visible()
        shot("account-added")

        # Until the worker's own startup cycle is over, a linked channel would get a scheduled run of its own.
        worker.wait_until_started()

        # Link the channel: Models A is scanned, read by the new account; Archive receives the packages.
        page.get_by_role("navigation").get_by_role("link", name="Channels").click()
        expect(page.get_by_role("status").filter(has_text="No destination yet")).to_be_visible()
        shot("channels")
        source = page.locator("#channel-rows tr", has_text="Models A")
        source.locator("label.switch").click()  # the drawn switch; its checkbox is invisible under it
        expect(source.get_by_role("switch", name="Scan Models A")).to_be_checked()
        expect(source).to_contain_text("Active, but no account reads it yet: add a reader.")
        source.get_by_label("Account to read Models A").select_option(label="Reader A")
        source.get_by_role("button", name="Add reader").click()
        expect(source).to_contain_text("Reader A reads it now.")
        expect(source.get_by_label("Readers")).to_contain_text("Reader A")

        page.locator("#channel-rows tr", has_text="Archive").get_by_role("link", name="Make destination").click()
        dialog = page.get_by_role("dialog")
        expect(dialog.get_by_role("heading", name="Make Archive the destination")).to_be_visible()
        expect(dialog.get_by_label(f"Reader A ({READER})")).to_be_checked()  # the one account that can post there
        shot("make-destination")
        dialog.get_by_role("button", name="Make destination").click()
        expect(page.get_by_role("dialog")).to_have_count(0)
        destination = page.locator("#channel-rows tr", has_text="Archive")
        expect(destination.locator(".badge", has_text="Destination")).to_be_visible()
        expect(destination.get_by_label("Writers")).to_contain_text("Reader A")
        expect(page.get_by_text("No destination yet")).to_have_count(0)  # swapped away with the rows
        shot("channels-linked")

        # Models A is new here, so it starts from now: the operator takes its whole history, counted first.
        page.locator("#channel-rows tr", has_text="Models A").get_by_role("link", name="Models A").click()
        rules = page.locator("#channel-rules")
        rules.get_by_label("The whole history").check()
        rules.get_by_role("button", name="Save rules").click()
        expect(rules.locator("#history-count")).to_contain_text("The whole history of Models A: 2 sets")
        shot("history-count")
        rules.get_by_role("button", name="Take the whole history").click()
        expect(rules.get_by_text("Saved.")).to_be_visible()

        # Ingest now: dragon.zip goes through, castle.zip's downloads fail until the retries run out.
        run = ingest_now_and_wait(page, shot, "ingest", ending="Partial")  # castle.zip was skipped
        expect(run.locator("td.num").nth(3)).to_have_text("1")  # ingested
        expect(run.locator("td.num").nth(4)).to_have_text("1")  # skipped

        page.get_by_role("navigation").get_by_role("link", name="Packages").click()
        packages = page.locator(".package-table tbody tr:not(.empty-row)")
        expect(packages).to_have_count(1)
        expect(packages.first).to_contain_text("dragon.zip")
        shot("packages")

        page.get_by_role("navigation").get_by_role("link", name="Skipped").click()
        skipped = page.locator(".skipped-table tbody tr", has_text="castle.zip")
        expect(skipped.locator(".badge")).to_have_text("Download failed")
        expect(skipped).to_contain_text("Telegram could not be reached or did not answer in time")
        expect(skipped).to_contain_text("1 of 5")
        shot("skipped")

        skipped.get_by_role("button", name="Retry castle.zip").click()
        retried = page.locator(".retried-row")
        expect(retried).to_contain_text("Queued for retry castle.zip")
        expect(retried).to_contain_text("tries it now")
        shot("retried")
        assert not SkippedPackage.objects.exists()

        # Retry ingests the channel now, worked by the worker: castle.zip downloads (the fault has spent its
        # failures). The run's page polls until it is over.
        retried.get_by_role("link", name=re.compile(r"Run #\d+")).click()
        expect(page.locator("h1 .badge")).to_have_text("Success", timeout=30_000)
        expect(page.locator(".scan-table")).to_contain_text("Models A")
        expect(page.locator("#run-body")).to_contain_text("castle.zip")
        shot("reingest-done")

        page.get_by_role("navigation").get_by_role("link", name="Packages").click()
        expect(packages).to_have_count(2)
        expect(page.locator(".package-table tbody tr", has_text="castle.zip")).to_be_visible()
        shot("packages-after-retry")
        page.get_by_role("navigation").get_by_role("link", name="Skipped").click()
        expect(page.get_by_text("Nothing skipped: every archive set found so far went through.")).to_be_visible()
        shot("skipped-empty")

    assert sorted(Package.objects.values_list("file_name", flat=True)) == ["castle.zip", "dragon.zip"]
    ran_on = set(IngestionRun.objects.values_list("worker_id", flat=True))
    assert len(ran_on) == 1 and worker_id() not in ran_on, f"both runs worked by the Celery worker, not {ran_on}"


# Journey 2 -------------------------------------------------------------------------------------------------------

# 09:00 UTC: a crontab firing at 09:50 leaves 10 minutes of a 09:00–10:00 window.
NINE = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)
AFTER_ELEVEN = datetime(2026, 11, 25, 11, 0, 1, tzinfo=UTC)  # the widened window has closed
NEXT_MORNING = datetime(2026, 11, 26, 9, 30, tzinfo=UTC)  # and opened again
GROUPS = 10


def test_journey_reminder_from_compose_through_a_paused_run_to_success(
    live_server, transactional_db, fanout_world, at, enqueued, settings, django_user_model, page, artifacts
):
    off_the_page_thread(lambda: fanout_world(groups_world(groups=GROUPS)))
    at(NINE)
    # The pill is worked out at a real pace: 10 messages at 1 a minute are 10 min + 15 % = 12 min.
    settings.REMINDER_MAX_SEND_PER_MINUTE = 1
    shot = Shots(page, artifacts, "journey2")
    log_in_as_superuser(page, live_server.url, django_user_model, shot)

    # Compose: a name and a text, every group, then the schedule.
    page.get_by_role("navigation").get_by_role("link", name="Reminders", exact=True).click()
    page.get_by_role("link", name="New reminder").click()
    expect(page.get_by_role("heading", name="New reminder")).to_be_visible()
    page.get_by_label("Name").fill("Flash sale")
    page.get_by_label("Text of part 1").fill("Flash sale: everything 20 % off until midnight.")
    shot("compose-message")
    page.get_by_role("button", name="Next: Groups →").click()
    expect(page.get_by_role("heading", name="Groups", exact=True)).to_be_visible()
    page.get_by_label("Select all shown").check()
    expect(page.locator("[data-selected-count]")).to_have_text(f"{GROUPS} of {GROUPS} selected")
    shot("compose-groups")
    page.get_by_role("button", name="Next: When →").click()
    expect(page.get_by_role("heading", name="When", exact=True)).to_be_visible()

    # 09:50 every day in a window that closes at 10:00: 12 minutes do not fit in 10. The pill is amber.
    page.get_by_label("Time zone").select_option("UTC")
    page.get_by_label("Window opens").select_option("9")
    page.get_by_label("Crontab").fill("50 9 * * *")
    page.get_by_label("Window closes").select_option("10")
    pill = page.locator("#eta-panel .eta-pill")
    # The pill answers each change from the server: on a loaded machine that may take longer than a few seconds.
    expect(pill).to_have_text("Likely to pause — widen the window or split into smaller runs", timeout=20_000)
    expect(pill).to_have_class("eta-pill eta-pill--pause")
    expect(page.locator("#eta-panel")).to_contain_text("≈ 12 min")
    shot("pill-amber")

    # Widen the window to 11:00: it fits, the pill is green.
    page.get_by_label("Window closes").select_option("11")
    expect(pill).to_have_text("Fits in window")
    expect(pill).to_have_class("eta-pill eta-pill--fits")
    shot("pill-green")
    page.get_by_role("button", name="Next: Review →").click()
    expect(page.get_by_role("heading", name="Review")).to_be_visible()
    expect(page.locator(".review-eta .eta-pill")).to_have_text("Fits in window")
    shot("review")
    page.get_by_role("button", name="Schedule reminder").click()
    expect(page.get_by_role("heading", name="Flash sale")).to_be_visible()
    expect(page.locator(".messages")).to_contain_text("“Flash sale” is saved")
    reminder = Reminder.objects.get()
    assert (reminder.schedule_crontab, reminder.window_start_hour, reminder.window_end_hour) == ("50 9 * * *", 9, 11)
    shot("scheduled")

    # Send now (after its confirmation), at 09:00. From here the tests' time-scaled pace: the minute is shorter.
    settings.REMINDER_MAX_SEND_PER_MINUTE = 6000
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Send now").click()
    expect(page.locator(".messages")).to_contain_text(f"is sending “Flash sale” to {GROUPS} groups")
    run = ReminderRun.objects.get()
    banner = page.locator(f"#run-panel-{run.pk}")
    expect(banner).to_contain_text(f"Run #{run.pk} is waiting for a worker — {GROUPS} groups to send")
    assert enqueued == [run.pk]
    enqueued.clear()
    shot("sent-now-queued")

    # The worker's part, in this process: 4 groups go out, then it is past 11:00 and the window has closed.
    at(NINE, then=AFTER_ELEVEN, after=4)
    run = off_the_page_thread(lambda: execute(run))
    assert (run.status, run.sent, run.pending) == (RunStatus.PAUSED, 4, GROUPS - 4)

    # The banner, polling every 2 s, turns into the paused one without a reload.
    expect(banner).to_contain_text(f"Run #{run.pk} paused — 4 of {GROUPS} groups delivered", timeout=15_000)
    expect(banner).to_contain_text("Delivery window closed at 11:00 on Wed 25 Nov (UTC).")
    expect(banner).to_have_class("run-panel run-panel--paused")
    shot("paused-banner")

    # The next morning the window is open again: Resume sends the 6 groups left.
    at(NEXT_MORNING)
    banner.get_by_role("button", name="Resume").click()
    expect(banner).to_contain_text(f"Resumed: {GROUPS - 4} groups to go.")
    expect(banner).to_have_class("run-panel run-panel--waiting")
    assert enqueued == [run.pk]
    shot("resumed")

    run = off_the_page_thread(lambda: execute(run))
    assert (run.status, run.sent, run.pending) == (RunStatus.SUCCESS, GROUPS, 0)
    expect(banner).to_contain_text(f"Run #{run.pk} delivered to all {GROUPS} groups", timeout=15_000)
    expect(banner).to_have_class("run-panel run-panel--success")
    expect(banner.get_by_role("button", name="Resume")).to_have_count(0)
    expect(page.locator(f"#run-{run.pk} .badge")).to_have_text("Success")
    shot("success")

    page.get_by_role("navigation").get_by_role("link", name="Activity", exact=True).click()
    expect(page.locator(f"#run-{run.pk}")).to_contain_text("Success")
    shot("activity")
