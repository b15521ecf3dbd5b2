"""404, 403 and 500 are the console's own pages, with its navigation and a way back, and a quiet console."""

import pytest
from playwright.sync_api import expect

from tests.support.browser import log_in_as, log_in_as_operator, quiet_page, screenshot

pytestmark = pytest.mark.browser


@pytest.fixture
def failing_page(settings):
    settings.ROOT_URLCONF = "tests.browser.error_urls"
    settings.DEBUG = False


@pytest.mark.parametrize(
    ("path", "status", "heading"),
    [
        ("/no-such-page/", 404, "Nothing here"),
        ("/fails/", 500, "Stashcast failed to answer"),
        ("/flower/", 403, "Not allowed"),
    ],
)
def test_an_error_page_has_the_navigation_and_a_way_back(
    live_server, transactional_db, failing_page, django_user_model, browser, artifacts, path, status, heading
):
    # The browser reports the error's status itself; nothing else may be said.
    with quiet_page(browser, size="wide", refusals=(status,)) as page:
        if status == 403:
            django_user_model.objects.create_user(username="viewer", password="v1ew-pass")
            log_in_as(page, live_server.url, "viewer", "v1ew-pass")
        else:
            log_in_as_operator(page, live_server.url, django_user_model)

        response = page.goto(f"{live_server.url}{path}")

        assert response.status == status
        expect(page.get_by_role("heading", level=1)).to_have_text(heading)
        expect(page.get_by_role("navigation", name="Main").get_by_role("link", name="Channels")).to_be_visible()
        expect(page.locator(".error-page .button", has_text="Back to the dashboard")).to_be_visible()
        screenshot(page, artifacts / f"error-{status}.png")
        page.locator(".error-page .button").click()
        expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()


def test_a_stranger_on_a_missing_page_gets_the_page_without_the_navigation(
    live_server, transactional_db, failing_page, page
):
    response = page.goto(f"{live_server.url}/no-such-page/")

    assert response.status == 404
    expect(page.get_by_role("heading", level=1)).to_have_text("Nothing here")
    expect(page.get_by_role("navigation", name="Main")).to_have_count(0)
