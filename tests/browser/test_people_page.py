"""The People page and the page an invite link opens, in Chromium, as an operator and as a viewer, wide and on a
phone: they fit and the console stays quiet; screenshots in test-artifacts/people-*.png and invite-*.png."""

import pytest
from playwright.sync_api import expect

from core import people
from tests.support.browser import SIZES, log_in_as, off_the_page_thread, quiet_page, screenshot, team_add

pytestmark = pytest.mark.browser

CHOSEN = "a-long-chosen-passphrase"
# Refusals (403, 410) are pages a person is meant to see.
REFUSALS = (403, 410)


def _team(django_user_model) -> str:
    """Vera (operator), Victor (viewer), and a link Vera made that waits to be used: its secret."""
    team_add(django_user_model)
    vera = django_user_model.objects.get(username="vera")
    return people.invite_create(role="viewer", username="wendy", created_by=vera)[1]


@pytest.mark.parametrize("size", SIZES)
def test_an_operator_invites_someone_who_joins(
    live_server, transactional_db, django_user_model, browser, artifacts, size
):
    token = off_the_page_thread(lambda: _team(django_user_model))
    with quiet_page(browser, size=size, refusals=REFUSALS) as page:
        log_in_as(page, live_server.url, "vera")
        page.locator(".team-menu > summary").click()
        page.get_by_role("link", name="People").click()
        expect(page.get_by_role("heading", name="People", exact=True)).to_be_visible()
        expect(page.locator(".people-table")).to_contain_text("victor")
        expect(page.get_by_role("heading", name="Links not used yet")).to_be_visible()
        expect(page.get_by_text("wendy", exact=True)).to_be_visible()
        screenshot(page, artifacts / f"people-operator-{size}.png")

        page.get_by_label("Role", exact=True).select_option("operator")
        page.get_by_role("button", name="Make an invite link").click()
        secret = page.get_by_label("The link")
        expect(secret).to_be_visible()
        link = secret.input_value()
        assert link.startswith(f"{live_server.url}/invite/")
        screenshot(page, artifacts / f"people-operator-{size}-link-shown.png")

        with quiet_page(browser, size=size, refusals=REFUSALS) as joining:
            joining.goto(link)
            expect(joining.get_by_role("heading", name="Join as operator")).to_be_visible()
            screenshot(joining, artifacts / f"invite-stranger-{size}.png")
            joining.get_by_label("Login name").fill("xavier")
            joining.get_by_label("Password", exact=True).fill(CHOSEN)
            joining.get_by_label("Password again").fill(CHOSEN)
            joining.get_by_role("button", name="Create my login").click()
            expect(joining.get_by_text("Welcome, xavier. Your password is set.")).to_be_visible()
            joining.locator(".team-menu > summary").click()
            expect(joining.get_by_role("link", name="People")).to_be_visible()

            joining.goto(link)
            expect(joining.get_by_role("heading", name="This link cannot be used")).to_be_visible()
            expect(joining.get_by_text("This link was already used; it works once.")).to_be_visible()
            screenshot(joining, artifacts / f"invite-used-{size}.png")

        page.goto(f"{live_server.url}/invite/{token}/")
        expect(page.get_by_role("heading", name="Join as viewer")).to_be_visible()
        expect(page.get_by_text("Your login name is wendy")).to_be_visible()
        screenshot(page, artifacts / f"invite-operator-{size}.png")


@pytest.mark.parametrize("size", SIZES)
def test_a_viewer_has_no_people_page_and_may_still_open_a_link(
    live_server, transactional_db, django_user_model, browser, artifacts, size
):
    token = off_the_page_thread(lambda: _team(django_user_model))
    with quiet_page(browser, size=size, refusals=REFUSALS) as page:
        log_in_as(page, live_server.url, "victor")
        expect(page.get_by_role("link", name="People")).to_have_count(0)
        page.goto(f"{live_server.url}/people/")
        expect(page.get_by_text("People is for operators; ask one to add or change a login.")).to_be_visible()
        screenshot(page, artifacts / f"people-viewer-{size}.png")

        page.goto(f"{live_server.url}/invite/{token}/")
        expect(page.get_by_role("heading", name="Join as viewer")).to_be_visible()
        screenshot(page, artifacts / f"invite-viewer-{size}.png")
