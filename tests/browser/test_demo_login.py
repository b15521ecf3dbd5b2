"""The demo teaches login: one of its accounts is logged out, and README.md's code and 2FA password log it in."""

import io
import re

import pytest
from django.conf import settings
from django.core.management import call_command
from playwright.sync_api import expect

from accounts.models import AuthState, TelegramAccount
from tests.support.browser import log_in_as_operator, off_the_page_thread

pytestmark = pytest.mark.browser

DEMO = settings.BASE_DIR / "telegram" / "sandbox" / "worlds" / "demo.json"


def _readme_login() -> tuple[str, str, str]:
    """The logged-out account, its code and its 2FA password, as README.md tells a newcomer."""
    text = " ".join((settings.BASE_DIR / "README.md").read_text().split())
    found = re.search(
        r"the account `(?P<phone>\+\d+)` is not logged in: press \*\*Log in\*\*, enter the login code `(?P<code>\d+)`, "
        r"then the two-step verification \(2FA\) password `(?P<password>[^`]+)`",
        text,
    )
    assert found, "README.md no longer says how to log in the demo's logged-out account"
    return found["phone"], found["code"], found["password"]


def test_a_newcomer_logs_in_the_demo_account_with_what_the_readme_says(
    live_server, transactional_db, settings, tmp_path, django_user_model, page, artifacts
):
    settings.SANDBOX_PATH = tmp_path / "sandbox"
    off_the_page_thread(lambda: call_command("sandbox_load", str(DEMO), "--authorize", stdout=io.StringIO()))
    phone, code, password = _readme_login()
    assert TelegramAccount.objects.get(phone=phone).auth_state == AuthState.PENDING
    log_in_as_operator(page, live_server.url, django_user_model)

    page.goto(f"{live_server.url}/accounts/")
    row = page.locator("#account-rows tr", has_text=phone)
    expect(row.locator(".badge", has_text="Not logged in")).to_be_visible()
    row.get_by_role("button", name="Log in").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Login code").fill(code)
    dialog.get_by_role("button", name="Log in").click()
    dialog.get_by_label("Two-step verification password").fill(password)
    dialog.get_by_role("button", name="Log in").click()

    expect(page.get_by_role("dialog")).to_have_count(0)
    expect(row.locator(".badge", has_text="Authenticated")).to_be_visible()
    expect(row).to_contain_text("Eli Newcomer")
    page.screenshot(path=artifacts / "demo-login.png", full_page=True)
