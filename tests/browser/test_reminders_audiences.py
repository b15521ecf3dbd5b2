"""Audiences in Chromium: the audience page's preview counts who matches as the operator types, the wizard's
Groups step picks audiences; a viewer sees both without the means to change them; at 1440 and 390 px, with a
quiet console."""

import pytest
from playwright.sync_api import expect

from reminders.services import AudienceFilter, audience_save
from tests.support.browser import log_in_as, log_in_as_operator, off_the_page_thread, top
from tests.support.reminders import SENDER, account, groups_world, make_reminder

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("width", [1440, 390])
def test_audiences_page_and_the_wizards_groups_step(
    live_server, transactional_db, fanout_world, django_user_model, browser, page, artifacts, width
):
    def setup():
        fanout_world(groups_world(groups=14))
        audience = audience_save(
            account=account(SENDER), name="First ten", filters=AudienceFilter(title_contains="Group 000")
        )
        reminder = make_reminder(name="Weekly promo", chats=[], audiences=[audience])
        return audience, reminder

    audience, reminder = off_the_page_thread(setup)
    problems = []
    page.on("console", lambda message: message.type in ("error", "warning") and problems.append(message.text))
    page.set_viewport_size({"width": width, "height": 900})
    log_in_as_operator(page, live_server.url, django_user_model)

    page.goto(f"{live_server.url}/reminders/audiences/{audience.pk}/")
    expect(page.locator("[data-match-count]")).to_have_text("10")
    page.get_by_label("Title contains").fill("Group 001")
    expect(page.locator("[data-match-count]")).to_have_text("4")
    top(page)
    page.screenshot(path=artifacts / f"reminders-audience-{width}.png", full_page=True)

    page.goto(f"{live_server.url}/reminders/{reminder.pk}/edit/groups/")
    expect(page.get_by_role("checkbox", name="First ten")).to_be_checked()
    top(page)
    page.screenshot(path=artifacts / f"reminders-audience-groups-step-{width}.png", full_page=True)
    assert problems == []

    django_user_model.objects.create_user(username="viewer", password="v1ew-pass")
    viewer = browser.new_context(viewport={"width": width, "height": 900}).new_page()
    viewer_problems = []
    viewer.on("console", lambda message: message.type in ("error", "warning") and viewer_problems.append(message.text))
    log_in_as(viewer, live_server.url, "viewer", "v1ew-pass")
    viewer.goto(f"{live_server.url}/reminders/audiences/")
    expect(viewer.get_by_role("link", name="First ten")).to_be_visible()
    expect(viewer.get_by_role("link", name="New audience")).to_have_count(0)
    viewer.screenshot(path=artifacts / f"reminders-audiences-viewer-{width}.png", full_page=True)
    viewer.goto(f"{live_server.url}/reminders/audiences/{audience.pk}/")
    expect(viewer.get_by_role("button", name="Save audience")).to_have_count(0)
    expect(viewer.locator(".summary-list")).to_contain_text("Group 000")
    viewer.screenshot(path=artifacts / f"reminders-audience-viewer-{width}.png", full_page=True)
    viewer.goto(f"{live_server.url}/reminders/{reminder.pk}/")
    expect(viewer.get_by_role("link", name="First ten")).to_be_visible()  # the Groups card names its audience
    viewer.screenshot(path=artifacts / f"reminders-audience-reminder-viewer-{width}.png", full_page=True)
    assert viewer_problems == []
