"""The compose page in Chromium: a part written in Markdown is shown as Telegram will show it while it is typed,
markup Telegram would refuse says where; an album and how it arrives through every wizard step; the run page
and its report for an operator and a viewer; at 1440 and 390 px, with a quiet console."""

from datetime import UTC, datetime

import pytest
from playwright.sync_api import expect

from core.models import RunStatus
from reminders.models import Reminder
from reminders.services import reminder_fire
from tests.support.browser import SIZES, log_in_as, log_in_as_operator, off_the_page_thread, quiet_page, screenshot, top
from tests.support.reminders import execute, groups_world, png_bytes

pytestmark = pytest.mark.browser

NINE = datetime(2026, 11, 26, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize("size", SIZES)
def test_the_preview_follows_the_text_as_it_is_typed(
    live_server, transactional_db, fanout_world, django_user_model, browser, artifacts, size
):
    off_the_page_thread(lambda: fanout_world(groups_world(groups=2)))
    width = SIZES[size]["width"]
    with quiet_page(browser, size=size) as page:
        log_in_as_operator(page, live_server.url, django_user_model)
        page.goto(f"{live_server.url}/reminders/new/")

        page.get_by_label("Written as").select_option("markdown")
        page.get_by_label("Text of part 1").fill(
            "🎉 **Black Friday**: __30% off__ ||BF30|| [shop](https://shop.example)"
        )
        preview = page.locator("#part-0-preview .part-text--live")
        expect(preview.locator("b")).to_have_text("Black Friday")
        expect(preview.locator("i")).to_have_text("30% off")
        expect(preview.locator(".tg-spoiler")).to_have_text("BF30")
        expect(preview.get_by_role("link", name="shop")).to_have_attribute("href", "https://shop.example")
        screenshot(page, artifacts / f"reminders-format-preview-{width}.png")

        page.get_by_label("Text of part 1").fill("🎉 **Black Friday: 30% off")
        expect(page.locator("#part-0-preview .field-error")).to_contain_text("“**” at line 1, column 3")
        screenshot(page, artifacts / f"reminders-format-refused-{width}.png")


@pytest.mark.parametrize("width", [1440, 390])
def test_compose_an_album_with_how_it_arrives_then_the_run_page_and_its_report(
    live_server, transactional_db, fanout_world, at, django_user_model, browser, page, artifacts, tmp_path, width
):
    off_the_page_thread(lambda: fanout_world(groups_world(groups=3)))
    at(NINE)
    problems = []
    page.on("console", lambda message: message.type in ("error", "warning") and problems.append(message.text))
    page.set_viewport_size({"width": width, "height": 900})
    log_in_as_operator(page, live_server.url, django_user_model)
    page.goto(f"{live_server.url}/reminders/new/")

    page.get_by_label("Name").fill("Black Friday")
    page.get_by_label("Written as").select_option("markdown")
    page.get_by_label("Text of part 1").fill("**Black Friday**: __30% off__ every kit")
    page.get_by_role("button", name="+ Album").click()
    expect(page.get_by_label("Choose 2 to 10 pictures or files")).to_be_attached()
    pictures = []
    for seed in (1, 2, 3):
        pictures.append(tmp_path / f"kit-{seed}.png")
        pictures[-1].write_bytes(png_bytes(seed))
    page.get_by_label("Choose 2 to 10 pictures or files").set_input_files(pictures)
    expect(page.locator(".album-items li")).to_have_count(3)
    page.get_by_label("Caption of part 2").fill("<b>Three</b> new kits")
    page.get_by_label("Written as").nth(1).select_option("html")
    expect(page.locator("#part-1-preview b")).to_have_text("Three")
    page.get_by_label("Silent: members get no notification").check()
    page.get_by_label("Pin it in each group (the previous run's post is unpinned)").check()
    top(page)
    page.screenshot(path=artifacts / f"reminders-wizard-1-message-{width}.png", full_page=True)

    page.get_by_role("button", name="Next: Groups →").click()
    for n in range(3):
        page.locator("[data-group-option]", has_text=f"Group {n:04d}").get_by_role("checkbox").check()
    expect(page.locator("#eta-panel")).to_contain_text("Groups3")
    top(page)
    page.screenshot(path=artifacts / f"reminders-wizard-2-groups-{width}.png", full_page=True)
    page.get_by_role("button", name="Next: When →").click()
    page.get_by_label("Time zone").select_option("UTC")
    page.get_by_text("Only when I press Send now", exact=True).click()
    top(page)
    page.screenshot(path=artifacts / f"reminders-wizard-3-when-{width}.png", full_page=True)
    page.get_by_role("button", name="Next: Review →").click()
    # Review shows each part as it arrives: formatted, the album by its files
    expect(page.get_by_role("heading", name="Review", exact=True)).to_be_visible()
    review = page.locator(".review-parts > li")
    expect(review.nth(0).locator("b")).to_have_text("Black Friday")
    expect(review.nth(0)).not_to_contain_text("**")
    expect(review.nth(1)).to_contain_text("album 3 files: kit-1.png, kit-2.png, kit-3.png")
    expect(review.nth(1).locator("b")).to_have_text("Three")
    top(page)
    page.screenshot(path=artifacts / f"reminders-wizard-4-review-{width}.png", full_page=True)
    page.get_by_role("button", name="Save reminder").click()
    expect(page.get_by_role("heading", name="Black Friday")).to_be_visible()
    assert problems == []
    expect(page.locator(".post-options")).to_have_text("Silent · link preview · pinned in each group")
    top(page)
    page.screenshot(path=artifacts / f"reminders-detail-formatted-{width}.png", full_page=True)

    run = off_the_page_thread(lambda: execute(reminder_fire(reminder=Reminder.objects.get())))
    assert run.status == RunStatus.SUCCESS, run.error_summary
    page.goto(f"{live_server.url}/activity/runs/{run.pk}/")
    with page.expect_download() as download:
        page.get_by_role("link", name="Report (CSV)").click()
    assert download.value.suggested_filename == f"reminder-run-{run.pk}.csv"
    top(page)
    page.screenshot(path=artifacts / f"reminders-run-report-operator-{width}.png", full_page=True)

    viewer = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    django_user_model.objects.create_user(username="viewer", password="s3cret-pass")
    log_in_as(viewer, live_server.url, "viewer", "s3cret-pass")
    viewer.goto(f"{live_server.url}/activity/runs/{run.pk}/")
    expect(viewer.get_by_role("link", name="Report (CSV)")).to_be_visible()
    top(viewer)
    viewer.screenshot(path=artifacts / f"reminders-run-report-viewer-{width}.png", full_page=True)
    viewer.context.close()
