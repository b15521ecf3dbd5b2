"""Compose a reminder in Chromium: many groups in a narrow window turn the ETA pill amber, widening the window
turns it green, and Schedule saves it."""

from datetime import UTC, datetime

import pytest
from playwright.sync_api import expect

from reminders.models import Reminder
from tests.support.browser import log_in_as_operator, off_the_page_thread, top
from tests.support.reminders import groups_world, png_bytes

pytestmark = pytest.mark.browser


# 09:00 UTC: a crontab firing at 09:45 leaves 15 minutes of a 09:00–10:00 window.
NINE = datetime(2026, 11, 25, 9, 0, tzinfo=UTC)


def test_compose_a_reminder_the_pill_goes_amber_then_green_and_it_is_scheduled(
    live_server, transactional_db, fanout_world, at, settings, tmp_path, django_user_model, page, artifacts
):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.REMINDER_MAX_SEND_PER_MINUTE = 5  # 60 groups × 3 parts = 180 messages: 36 min + 15 % = 41 min
    off_the_page_thread(lambda: fanout_world(groups_world(groups=60)))
    at(NINE)

    log_in_as_operator(page, live_server.url, django_user_model)
    page.get_by_role("link", name="Reminders", exact=True).click()
    expect(page.get_by_role("heading", name="Reminders")).to_be_visible()
    page.get_by_role("link", name="New reminder").click()

    # Message: Next without a name or a text says what is missing, in place.
    expect(page.get_by_role("heading", name="New reminder")).to_be_visible()
    page.get_by_role("button", name="Next: Groups →").click()
    expect(page.get_by_text("Give the reminder a name.")).to_be_visible()
    expect(page.get_by_text("Write the text, or remove this part.")).to_be_visible()
    top(page)
    page.screenshot(path=artifacts / "reminders-compose-errors.png", full_page=True)

    # A name, a text, a picture (uploaded as soon as it is chosen) with a caption, and a second text.
    page.get_by_label("Name").fill("Black Friday")
    expect(page.get_by_text("Give the reminder a name.")).to_have_count(0)  # gone once filled, not at Next
    page.get_by_label("Text of part 1").fill("Black Friday starts now: everything 30 % off.")
    expect(page.get_by_text("Write the text, or remove this part.")).to_have_count(0)
    page.get_by_role("button", name="+ Picture or file").click()
    page.get_by_label("Choose a picture or file").set_input_files(
        files=[{"name": "promo.png", "mimeType": "image/png", "buffer": png_bytes(5)}]
    )
    expect(page.locator(".media-name")).to_have_text("promo.png")
    page.get_by_label("Caption of part 2").fill("This week only")
    page.get_by_role("button", name="+ Text").click()
    page.get_by_label("Text of part 3").fill("Reply here with questions.")
    page.get_by_role("button", name="Move part 3 up").click()
    expect(page.get_by_label("Text of part 2")).to_have_value("Reply here with questions.")
    expect(page.get_by_label("Caption of part 3")).to_have_value("This week only")
    top(page)
    page.screenshot(path=artifacts / "reminders-compose-message.png", full_page=True)
    page.get_by_role("button", name="Next: Groups →").click()

    # Groups: search, select what it shows, then every group.
    expect(page.get_by_role("heading", name="Groups", exact=True)).to_be_visible()
    page.get_by_label("Search groups").fill("group 001")
    expect(page.locator("[data-group-option]:visible")).to_have_count(10)
    page.get_by_label("Select all shown").check()
    expect(page.locator("[data-selected-count]")).to_have_text("10 of 60 selected")
    expect(page.locator("#eta-panel")).to_contain_text("Groups10")
    page.get_by_label("Search groups").fill("")
    page.get_by_label("Select all shown").check()
    expect(page.locator("[data-selected-count]")).to_have_text("60 of 60 selected")
    expect(page.locator("#eta-panel")).to_contain_text("Messages180")
    top(page)
    page.screenshot(path=artifacts / "reminders-compose-groups.png", full_page=True)
    page.get_by_role("button", name="Next: When →").click()

    # When: a window that closes when it opens is refused, under its field.
    expect(page.get_by_role("heading", name="When", exact=True)).to_be_visible()
    page.get_by_label("Time zone").select_option("UTC")
    page.get_by_label("Window opens").select_option("9")
    page.get_by_label("Window closes").select_option("9")
    page.get_by_role("button", name="Next: Review →").click()
    error = page.locator(".field.has-error", has=page.get_by_label("Window closes"))
    expect(error).to_contain_text("for all day choose 00:00–24:00 (opens at 0, closes at 24)")
    expect(error).not_to_contain_text("window_")  # the operator's words, not the field's name
    top(page)
    page.screenshot(path=artifacts / "reminders-compose-window-error.png", full_page=True)

    # 09:45 every day, in a window that closes at 10:00: 41 minutes do not fit in 15.
    page.get_by_label("Crontab").fill("45 9 * * *")
    page.get_by_label("Window closes").select_option("10")
    pill = page.locator("#eta-panel .eta-pill")
    expect(pill).to_have_text("Likely to pause — widen the window or split into smaller runs")
    expect(pill).to_have_class("eta-pill eta-pill--pause")
    expect(page.locator("#eta-panel")).to_contain_text("≈ 41 min")
    top(page)
    page.screenshot(path=artifacts / "reminders-compose-amber.png", full_page=True)

    page.get_by_label("Window closes").select_option("11")
    expect(pill).to_have_text("Fits in window")
    expect(pill).to_have_class("eta-pill eta-pill--fits")
    top(page)
    page.screenshot(path=artifacts / "reminders-compose-green.png", full_page=True)
    page.get_by_role("button", name="Next: Review →").click()

    # Review, with the pill, then Schedule.
    expect(page.get_by_role("heading", name="Review")).to_be_visible()
    expect(page.locator(".review-eta .eta-pill")).to_have_text("Fits in window")
    expect(page.locator(".review-facts")).to_contain_text("At 09:45")
    top(page)
    page.screenshot(path=artifacts / "reminders-compose-review.png", full_page=True)
    page.get_by_role("button", name="Schedule reminder").click()

    expect(page.get_by_role("heading", name="Black Friday")).to_be_visible()
    expect(page.locator(".messages")).to_contain_text("“Black Friday” is saved")
    reminder = Reminder.objects.get()
    assert (reminder.schedule_crontab, reminder.window_start_hour, reminder.window_end_hour) == ("45 9 * * *", 9, 11)
    assert reminder.targets.count() == 60
    assert [(part.text[:5], part.media and part.media.name, part.caption) for part in reminder.parts.all()] == [
        ("Black", None, ""),
        ("Reply", None, ""),
        ("", "promo.png", "This week only"),
    ]
    top(page)
    page.screenshot(path=artifacts / "reminders-detail-new.png", full_page=True)

    # The edit pages carry the pill too: narrowing the window again turns it amber before saving.
    page.get_by_role("link", name="Edit").nth(1).click()
    expect(page.get_by_role("heading", name="Edit schedule")).to_be_visible()
    expect(pill).to_have_text("Fits in window")
    page.get_by_label("Window closes").select_option("10")
    expect(pill).to_have_class("eta-pill eta-pill--pause")
    top(page)
    page.screenshot(path=artifacts / "reminders-edit-when.png", full_page=True)
    page.get_by_role("link", name="Cancel").click()
    page.get_by_role("link", name="Edit").nth(2).click()
    expect(page.get_by_role("heading", name="Edit groups")).to_be_visible()
    expect(page.locator("[data-selected-count]")).to_have_text("60 of 60 selected")
    top(page)
    page.screenshot(path=artifacts / "reminders-edit-groups.png", full_page=True)

    page.get_by_role("link", name="Reminders", exact=True).click()
    expect(page.locator("tbody tr", has_text="Black Friday")).to_contain_text("At 09:45")
    top(page)
    page.screenshot(path=artifacts / "reminders-list.png", full_page=True)
