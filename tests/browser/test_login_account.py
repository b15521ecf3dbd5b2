"""The operator logs in, adds a Premium sandbox account and completes its login code, in Chromium."""

import pytest
from playwright.sync_api import expect

from accounts.models import AuthState, TelegramAccount
from tests.support.accounts import PREMIUM, WORLD

pytestmark = pytest.mark.browser


def test_operator_adds_a_premium_account(live_server, transactional_db, sandbox, django_user_model, page, artifacts):
    sandbox(WORLD)
    django_user_model.objects.create_superuser(username="operator", password="s3cret-pass")

    page.goto(f"{live_server.url}/")
    page.screenshot(path=artifacts / "login.png")
    page.get_by_label("Username").fill("operator")
    page.get_by_label("Password").fill("s3cret-pass")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()

    page.get_by_role("navigation").get_by_role("link", name="Accounts").click()
    page.get_by_role("link", name="Add account").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Phone number").fill(PREMIUM)
    dialog.get_by_role("button", name="Send login code").click()
    expect(dialog.get_by_role("heading", name="Enter the login code")).to_be_visible()

    dialog.get_by_label("Login code").fill("00000")
    dialog.get_by_role("button", name="Log in").click()
    expect(dialog.locator(".field-error")).to_be_visible()
    page.screenshot(path=artifacts / "account-wrong-code.png")

    dialog.get_by_label("Login code").fill("22222")
    dialog.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("dialog")).to_have_count(0)
    row = page.locator("#account-rows tr", has_text=PREMIUM)
    expect(row.locator(".badge", has_text="Authenticated")).to_be_visible()
    expect(row.locator(".badge", has_text="Premium")).to_be_visible()

    row.get_by_role("button", name="Refresh chats").click()
    expect(row.get_by_text("Found 1 chat.")).to_be_visible()
    page.screenshot(path=artifacts / "accounts.png", full_page=True)

    page.get_by_role("navigation").get_by_role("link", name="Dashboard").click()
    expect(page.locator(".stat", has_text="Premium accounts").locator(".stat-value")).to_have_text("1")
    page.screenshot(path=artifacts / "dashboard.png", full_page=True)


def test_an_expired_login_goes_back_to_the_login_page(live_server, transactional_db, admin_client, page):
    TelegramAccount.objects.create(phone=PREMIUM, auth_state=AuthState.AUTHENTICATED)
    session_cookie = admin_client.cookies["sessionid"]
    page.context.add_cookies([{"name": "sessionid", "value": session_cookie.value, "url": live_server.url}])
    page.goto(f"{live_server.url}/accounts/")

    page.context.clear_cookies(name="sessionid")
    page.get_by_role("button", name="Refresh chats").click()

    expect(page).to_have_url(f"{live_server.url}/login/?next=%2Faccounts%2F")
    page.get_by_label("Username").fill("admin")
    page.get_by_label("Password").fill("password")  # pytest-django's admin_user
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{live_server.url}/accounts/")


def test_logging_out_says_so_and_the_api_docs_ask_for_a_login(
    live_server, transactional_db, django_user_model, page, artifacts
):
    django_user_model.objects.create_superuser(username="operator", password="s3cret-pass")
    page.goto(f"{live_server.url}/api/docs/")
    expect(page.get_by_role("button", name="Log in")).to_be_visible()  # the login page, not a bare 403
    page.get_by_label("Username").fill("operator")
    page.get_by_label("Password").fill("s3cret-pass")
    page.get_by_role("button", name="Log in").click()
    expect(page).to_have_url(f"{live_server.url}/api/docs/")

    page.goto(f"{live_server.url}/")
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("status")).to_have_text("You are logged out.")
    page.screenshot(path=artifacts / "logged-out.png")
