"""In Chromium: a login locked out by throttling, unlocked by an operator on the Accounts page, logs in."""

import pytest
from playwright.sync_api import expect

from tests.support.browser import log_in_as_operator, top

pytestmark = pytest.mark.browser

PASSWORD = "alice-s3cret-pass"


def log_in(page, url: str, password: str) -> None:
    page.goto(f"{url}/login/")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()


def test_an_operator_unlocks_a_locked_out_login_and_it_logs_in(
    live_server, transactional_db, django_user_model, browser, page, settings, artifacts
):
    django_user_model.objects.create_user(username="alice", password=PASSWORD)
    alice = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        log_in(alice, live_server.url, "wrong")
    log_in(alice, live_server.url, PASSWORD)
    expect(alice.get_by_text("Too many failed logins for this user from your address.")).to_be_visible()
    expect(alice.get_by_text("ask an operator to unlock it on the Accounts page")).to_be_visible()

    log_in_as_operator(page, live_server.url, django_user_model)
    page.get_by_role("link", name="Accounts", exact=True).click()
    row = page.locator("#login-alice")
    expect(row).to_contain_text("Locked until")
    top(page)
    page.screenshot(path=artifacts / "accounts-login-locked.png", full_page=True)

    row.get_by_role("button", name="Unlock alice").click()

    expect(page.locator("#console-logins")).to_contain_text("alice can log in again.")
    expect(page.locator("#login-alice")).not_to_contain_text("Locked until")
    top(page)
    page.screenshot(path=artifacts / "accounts-login-unlocked.png", full_page=True)

    log_in(alice, live_server.url, PASSWORD)
    expect(alice.get_by_role("heading", name="Dashboard")).to_be_visible()
    alice.context.close()
