"""Audiences in Chromium: the audience page's preview counts who matches as the operator types, the wizard's
Groups step picks audiences; a viewer sees both without the means to change them; at 1440 and 390 px, with a
quiet console."""

import pytest
from playwright.sync_api import expect

from reminders.services import AudienceFilter, audience_save
from tests.support.browser import SIZES, log_in_as, log_in_as_operator, off_the_page_thread, quiet_page, screenshot
from tests.support.reminders import SENDER, account, groups_world, make_reminder

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("size", SIZES)
def test_audiences_page_and_the_wizards_groups_step(
    live_server, transactional_db, fanout_world, django_user_model, browser, artifacts, size
):
    def setup():
        fanout_world(groups_world(groups=14))
        audience = audience_save(
            account=account(SENDER), name="First ten", filters=AudienceFilter(title_contains="Group 000")
        )
        reminder = make_reminder(name="Weekly promo", chats=[], audiences=[audience])
        return audience, reminder

    audience, reminder = off_the_page_thread(setup)
    width = SIZES[size]["width"]
    with quiet_page(browser, size=size) as page:
        log_in_as_operator(page, live_server.url, django_user_model)

        page.goto(f"{live_server.url}/reminders/audiences/{audience.pk}/")
        expect(page.locator("[data-match-count]")).to_have_text("10")
        page.get_by_label("Title contains").fill("Group 001")
        expect(page.locator("[data-match-count]")).to_have_text("4")
        screenshot(page, artifacts / f"reminders-audience-{width}.png")

        page.goto(f"{live_server.url}/reminders/{reminder.pk}/edit/groups/")
        expect(page.get_by_role("checkbox", name="First ten")).to_be_checked()
        screenshot(page, artifacts / f"reminders-audience-groups-step-{width}.png")

    django_user_model.objects.create_user(username="viewer", password="v1ew-pass")
    with quiet_page(browser, size=size) as viewer:
        log_in_as(viewer, live_server.url, "viewer", "v1ew-pass")
        viewer.goto(f"{live_server.url}/reminders/audiences/")
        expect(viewer.get_by_role("link", name="First ten")).to_be_visible()
        expect(viewer.get_by_role("link", name="New audience")).to_have_count(0)
        screenshot(viewer, artifacts / f"reminders-audiences-viewer-{width}.png")
        viewer.goto(f"{live_server.url}/reminders/audiences/{audience.pk}/")
        expect(viewer.get_by_role("button", name="Save audience")).to_have_count(0)
        expect(viewer.locator(".summary-list")).to_contain_text("Group 000")
        screenshot(viewer, artifacts / f"reminders-audience-viewer-{width}.png")
        viewer.goto(f"{live_server.url}/reminders/{reminder.pk}/")
        expect(viewer.get_by_role("link", name="First ten")).to_be_visible()  # the Groups card names its audience
        screenshot(viewer, artifacts / f"reminders-audience-reminder-viewer-{width}.png")
