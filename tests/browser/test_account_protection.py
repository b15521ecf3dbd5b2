"""An account that Telegram flagged, in Chromium: PEER_FLOOD rests it and pauses its run → the Accounts page says
"Resting until …" with its health → the operator keeps the runs paused and stops all sending → on the run's page
the pending groups move to another account, as a new linked run."""

import pytest
from playwright.sync_api import expect

from core.models import RunStatus
from reminders.models import ReminderRun
from reminders.services import reminder_fire
from tests.support.browser import log_in_as_operator, off_the_page_thread, top
from tests.support.reminders import SENDER, SENDER_B, account, execute, groups_world, make_reminder

pytestmark = [pytest.mark.browser, pytest.mark.usefixtures("fast_pace", "fresh_buckets")]


def test_a_flagged_account_rests_and_its_pending_groups_move(
    live_server, transactional_db, fanout_world, enqueued, django_user_model, page, artifacts
):
    peer_flood = {"op": "send", "account": SENDER, "error": "peer_flood", "after": 4, "times": 100}
    off_the_page_thread(lambda: fanout_world(groups_world(groups=10, accounts=(SENDER, SENDER_B), faults=[peer_flood])))
    run = reminder_fire(reminder=make_reminder(name="Flash sale"))
    enqueued.clear()
    run = off_the_page_thread(lambda: execute(run))
    assert (run.status, run.sent, run.pending) == (RunStatus.PAUSED, 4, 6)
    page.on("dialog", lambda dialog: dialog.accept())

    log_in_as_operator(page, live_server.url, django_user_model)
    page.get_by_role("link", name="Accounts", exact=True).click()
    row = page.locator(f"#account-{account(SENDER).pk}")
    expect(row.locator(".badge.health--resting")).to_have_text("Resting")
    expect(row).to_contain_text(f"Telegram answered PEER_FLOOD during run #{run.pk}")
    expect(row).to_contain_text("Sent 4 in the last hour")
    expect(page.locator(f"#account-{account(SENDER_B).pk} .badge.health--healthy")).to_have_text("Healthy")
    top(page)
    page.screenshot(path=artifacts / "accounts-resting.png", full_page=True)

    row.get_by_role("button", name="Keep runs paused after it").click()
    expect(row).to_contain_text("Its runs stay paused after it.")
    row.get_by_role("button", name="Stop all sending now").click()
    expect(row.locator(".badge.health--stopped")).to_have_text("Sending stopped")
    expect(row.get_by_role("button", name="Allow sending")).to_be_visible()
    top(page)
    page.screenshot(path=artifacts / "accounts-sending-stopped.png", full_page=True)

    page.goto(f"{live_server.url}/activity/runs/{run.pk}/")
    panel = page.locator(f"#run-panel-{run.pk}")
    expect(panel).to_contain_text("is resting until")
    panel.get_by_label("Move the 6 pending groups to").select_option(label=str(account(SENDER_B)))
    top(page)
    page.screenshot(path=artifacts / "run-move-pending.png", full_page=True)
    panel.get_by_role("button", name="Move pending groups").click()
    expect(panel).to_contain_text("Moved 6 pending groups to run #")
    moved = ReminderRun.objects.get(moved_from=run)
    expect(panel).to_contain_text(f"Moved 6 pending groups to run #{moved.pk}, sent by {account(SENDER_B)}.")
    expect(panel).to_contain_text(f"6 pending groups moved to run #{moved.pk}")
    assert enqueued == [moved.pk]
    top(page)
    page.screenshot(path=artifacts / "run-moved.png", full_page=True)

    page.goto(f"{live_server.url}/activity/runs/{moved.pk}/")
    moved_panel = page.locator(f"#run-panel-{moved.pk}")
    expect(moved_panel).to_contain_text(f"Made of the pending groups of run #{run.pk}")
    moved_panel.get_by_role("button", name="Pause").click()
    expect(moved_panel).to_contain_text("Paused by the operator")
    top(page)
    page.screenshot(path=artifacts / "run-paused-by-operator.png", full_page=True)
