"""Send me a test in Chromium: the reminder page's button answers in place where the test went and when; a viewer
sees no button; at 1440 and 390 px, with a quiet console."""

from datetime import UTC, datetime

import pytest
from playwright.sync_api import expect

from reminders.services import PartSpec
from tests.support.browser import SIZES, log_in_as, log_in_as_operator, off_the_page_thread, quiet_page, screenshot
from tests.support.reminders import groups_world, image, make_reminder

pytestmark = pytest.mark.browser

TWO_PM = datetime(2026, 11, 26, 14, 2, tzinfo=UTC)


@pytest.mark.parametrize("size", SIZES)
def test_send_me_a_test_says_where_and_when(
    live_server, transactional_db, fanout_world, at, django_user_model, browser, artifacts, size
):
    def setup():
        fanout_world(groups_world(groups=2))
        parts = [
            PartSpec(text="🎉 **Black Friday**: 30% off", format="markdown"),
            PartSpec(album=[image(1), image(2)], caption="<b>Two</b> kits", format="html"),
        ]
        return make_reminder(name="Black Friday", parts=parts)

    reminder = off_the_page_thread(setup)
    at(TWO_PM)
    width = SIZES[size]["width"]
    with quiet_page(browser, size=size) as page:
        log_in_as_operator(page, live_server.url, django_user_model)
        page.goto(f"{live_server.url}/reminders/{reminder.pk}/")

        page.get_by_role("button", name="Send me a test").click()
        expect(page.locator(".test-send [role=status]")).to_have_text(
            "Sent to Saved Messages at 14:02 (UTC). A test counts in no run."
        )
        screenshot(page, artifacts / f"reminders-test-send-{width}.png")

    django_user_model.objects.create_user(username="viewer", password="v1ew-pass")
    with quiet_page(browser, size=size) as viewer:
        log_in_as(viewer, live_server.url, "viewer", "v1ew-pass")
        viewer.goto(f"{live_server.url}/reminders/{reminder.pk}/")
        expect(viewer.get_by_role("heading", name="Black Friday")).to_be_visible()
        expect(viewer.get_by_role("button", name="Send me a test")).to_have_count(0)
        screenshot(viewer, artifacts / f"reminders-test-send-viewer-{width}.png")
