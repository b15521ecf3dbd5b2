"""The compose wizard in Chromium: it starts with the account that has groups, forum topics are picked by
name, the summary keeps what the form holds after an error; and a viewer sees the reminder without a button
that changes it."""

from datetime import UTC, datetime

import pytest
from playwright.sync_api import expect

from accounts.models import AccountChat
from reminders.models import Reminder
from tests.support.browser import log_in_as, log_in_as_operator, off_the_page_thread, top
from tests.support.reminders import SENDER, SENDER_B, account, groups_world, make_reminder

pytestmark = pytest.mark.browser

NINE = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)


def forum_world() -> dict:
    world = groups_world(groups=3, accounts=(SENDER, SENDER_B), forum=True)
    for chat in world["chats"]:
        chat["topics"] = [{"id": 1, "title": "General"}, {"id": 7, "title": "News"}, {"id": 42, "title": "Dragons"}]
    return world


def test_compose_with_a_forum_topic_picked_by_name_and_a_summary_that_follows_the_form(
    live_server, transactional_db, fanout_world, at, django_user_model, page, artifacts
):
    off_the_page_thread(lambda: fanout_world(forum_world()))
    # Sender 0 comes first by name but can post nowhere: the wizard starts with Sender 1.
    AccountChat.objects.filter(account=account(SENDER)).update(can_post=False)
    at(NINE)
    log_in_as_operator(page, live_server.url, django_user_model)
    page.goto(f"{live_server.url}/reminders/new/")

    expect(page.get_by_label("Send from")).to_have_value(str(account(SENDER_B).pk))
    page.get_by_label("Name").fill("Dragon drop")
    page.get_by_label("Text of part 1").fill("New dragons are in.")
    page.get_by_role("button", name="Next: Groups →").click()

    topic = page.get_by_label("Topic in Group 0000")
    expect(topic.locator("option")).to_have_text(["General", "Dragons", "News"])
    page.locator("[data-group-option]", has_text="Group 0000").get_by_role("checkbox").check()
    topic.select_option(label="Dragons")
    page.locator("[data-group-option]", has_text="Group 0001").get_by_role("checkbox").check()
    top(page)
    page.screenshot(path=artifacts / "reminders-compose-topics.png", full_page=True)
    page.get_by_role("button", name="Next: When →").click()

    # An overnight window with a crontab outside it: the error, and the summary as the form holds it.
    page.get_by_label("Time zone").select_option("UTC")
    page.get_by_label("Crontab").fill("0 12 * * *")
    page.get_by_label("Window opens").select_option("18")
    page.get_by_label("Window closes").select_option("9")
    page.get_by_role("button", name="Next: Review →").click()
    expect(page.locator(".field-error", has_text="never fires inside the delivery window 18:00–09:00")).to_be_visible()
    summary = page.locator("#eta-panel .summary-list")
    expect(summary).to_contain_text("Window18:00–09:00")
    expect(summary).to_contain_text("Parts1")
    expect(summary).to_contain_text("Groups2")
    top(page)
    page.screenshot(path=artifacts / "reminders-compose-summary-after-error.png", full_page=True)

    page.get_by_label("Crontab").fill("30 23 * * *")
    page.get_by_role("button", name="Next: Review →").click()
    expect(page.locator(".review-facts")).to_contain_text("Group 0000 / Dragons")
    expect(page.locator(".review-facts")).to_contain_text("18:00–09:00")
    top(page)
    page.screenshot(path=artifacts / "reminders-compose-review-overnight.png", full_page=True)
    page.get_by_role("button", name="Schedule reminder").click()
    expect(page.get_by_role("heading", name="Dragon drop")).to_be_visible()
    reminder = Reminder.objects.get()
    assert (reminder.account, reminder.window_start_hour, reminder.window_end_hour) == (account(SENDER_B), 18, 9)
    assert sorted(reminder.targets.values_list("chat__title", "topic_id")) == [("Group 0000", 42), ("Group 0001", None)]
    expect(page.locator(".target-list")).to_contain_text("Group 0000 / Dragons")


def test_a_viewer_sees_reminders_without_buttons_that_change_them(
    live_server, transactional_db, fanout_world, django_user_model, page, artifacts
):
    off_the_page_thread(lambda: fanout_world(groups_world(groups=3)))
    reminder = make_reminder(name="Weekly promo", schedule_crontab="0 9 * * *", start=9, end=18)
    django_user_model.objects.create_user(username="viewer", password="s3cret-pass")
    log_in_as(page, live_server.url, "viewer", "s3cret-pass")

    page.goto(f"{live_server.url}/reminders/")
    expect(page.locator("tbody tr", has_text="Weekly promo")).to_contain_text("09:00–18:00")
    expect(page.get_by_role("link", name="New reminder")).to_have_count(0)
    expect(page.get_by_role("switch")).to_have_count(0)
    expect(page.get_by_role("button", name="Send “Weekly promo” now")).to_have_count(0)
    top(page)
    page.screenshot(path=artifacts / "reminders-list-viewer.png", full_page=True)

    page.goto(f"{live_server.url}/reminders/{reminder.pk}/")
    expect(page.get_by_role("heading", name="Weekly promo")).to_be_visible()
    expect(page.get_by_role("link", name="Edit")).to_have_count(0)
    expect(page.locator("main").get_by_role("button")).to_have_count(0)
    top(page)
    page.screenshot(path=artifacts / "reminders-detail-viewer.png", full_page=True)


def test_the_summary_and_the_pill_never_say_what_the_validator_refuses(
    live_server, transactional_db, fanout_world, at, django_user_model, page, artifacts
):
    off_the_page_thread(lambda: fanout_world(groups_world(groups=2)))
    at(NINE)
    log_in_as_operator(page, live_server.url, django_user_model)
    page.goto(f"{live_server.url}/reminders/new/")
    page.get_by_label("Name").fill("Typo")
    page.get_by_label("Text of part 1").fill("Hello.")
    page.get_by_role("button", name="Next: Groups →").click()
    page.locator("[data-group-option]", has_text="Group 0000").get_by_role("checkbox").check()
    page.get_by_role("button", name="Next: When →").click()
    page.get_by_label("Time zone").select_option("UTC")
    summary = page.locator("#eta-panel")

    page.get_by_label("Crontab").fill("61 * * * *")
    page.get_by_role("button", name="Next: Review →").click()
    expect(page.locator(".field-error", has_text="not a valid crontab")).to_be_visible()
    expect(summary.locator(".summary-list")).to_contain_text("61 * * * * (not a valid crontab)")
    expect(summary).not_to_contain_text("minutes past")
    expect(summary.locator(".eta-pill")).to_have_text("No estimate yet")

    page.get_by_text("Once", exact=True).click()  # the drawn segment over its radio
    page.get_by_label("Send at").fill("2020-11-26T10:00")
    page.get_by_role("button", name="Next: Review →").click()
    expect(page.locator(".field-error", has_text="already passed")).to_be_visible()
    expect(summary.locator(".eta-pill")).to_have_text("No estimate yet")
    expect(summary).to_contain_text("The one-off time has already passed")
    expect(summary).not_to_contain_text("today")
    top(page)
    page.screenshot(path=artifacts / "reminders-compose-refused-summary.png", full_page=True)
