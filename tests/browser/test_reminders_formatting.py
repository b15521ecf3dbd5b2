"""The compose page in Chromium: a part written in Markdown is shown as Telegram will show it while it is typed,
and markup Telegram would refuse says where, at 1440 and 390 px, with a quiet console."""

import pytest
from playwright.sync_api import expect

from tests.support.browser import log_in_as_operator, off_the_page_thread, top
from tests.support.reminders import groups_world

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1440, 390])
def test_the_preview_follows_the_text_as_it_is_typed(
    live_server, transactional_db, fanout_world, django_user_model, page, artifacts, width
):
    off_the_page_thread(lambda: fanout_world(groups_world(groups=2)))
    problems = []
    page.on("console", lambda message: message.type in ("error", "warning") and problems.append(message.text))
    page.set_viewport_size({"width": width, "height": 900})
    log_in_as_operator(page, live_server.url, django_user_model)
    page.goto(f"{live_server.url}/reminders/new/")

    page.get_by_label("Written as").select_option("markdown")
    page.get_by_label("Text of part 1").fill("🎉 **Black Friday**: __30% off__ ||BF30|| [shop](https://shop.example)")
    preview = page.locator("#part-0-preview .part-text--live")
    expect(preview.locator("b")).to_have_text("Black Friday")
    expect(preview.locator("i")).to_have_text("30% off")
    expect(preview.locator(".tg-spoiler")).to_have_text("BF30")
    expect(preview.get_by_role("link", name="shop")).to_have_attribute("href", "https://shop.example")
    top(page)
    page.screenshot(path=artifacts / f"reminders-format-preview-{width}.png", full_page=True)

    page.get_by_label("Text of part 1").fill("🎉 **Black Friday: 30% off")
    expect(page.locator("#part-0-preview .field-error")).to_contain_text("“**” at line 1, column 3")
    top(page)
    page.screenshot(path=artifacts / f"reminders-format-refused-{width}.png", full_page=True)
    assert problems == []
