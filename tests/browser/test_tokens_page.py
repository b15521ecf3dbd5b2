"""The Tokens page in Chromium, as an operator and as a viewer, wide and on a phone: make a token (its secret shown
once, copied with the button), see it listed, revoke it; it fits and its console is quiet. Screenshots in
test-artifacts/tokens-*.png."""

import hashlib

import pytest
from playwright.sync_api import expect

from core.models import ApiToken
from core.tokens import api_token_create
from tests.support.browser import SIZES, log_in_as, off_the_page_thread, quiet_page, screenshot, team_add

pytestmark = pytest.mark.browser


def _people(django_user_model):
    team_add(django_user_model)
    victor = django_user_model.objects.get(username="victor")
    api_token_create(owner=victor, name="victor's dashboard", scope="read")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("role", ["vera", "victor"])
def test_the_tokens_page_makes_lists_and_revokes(
    live_server, transactional_db, django_user_model, browser, artifacts, role, size
):
    off_the_page_thread(lambda: _people(django_user_model))
    with quiet_page(browser, size=size, permissions=["clipboard-read", "clipboard-write"]) as page:
        log_in_as(page, live_server.url, role)
        page.goto(f"{live_server.url}/tokens/")
        expect(page.get_by_role("heading", name="Tokens", exact=True)).to_be_visible()
        listed = page.locator("#tokens-body table")
        if role == "vera":
            expect(listed).to_contain_text("victor's dashboard")  # operators see everyone's
            expect(page.get_by_label("Scope").locator("option")).to_have_count(2)
        else:
            expect(page.get_by_label("Scope").locator("option")).to_have_count(1)  # viewers: read only
        screenshot(page, artifacts / f"tokens-{role}-{size}.png")

        page.get_by_label("Name").fill("backup script")
        if role == "vera":
            page.get_by_label("Scope").select_option("write")
        page.get_by_role("button", name="Make token").click()
        secret_field = page.locator("#token-secret")
        expect(secret_field).to_be_visible()
        secret = secret_field.input_value()
        page.get_by_role("button", name="Copy").click()
        expect(page.get_by_role("button", name="Copied")).to_be_visible()
        assert page.evaluate("navigator.clipboard.readText()") == secret
        made = off_the_page_thread(lambda: ApiToken.objects.get(name="backup script"))
        assert made.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
        assert made.scope == ("write" if role == "vera" else "read")
        expect(page.locator(f"#token-{made.pk}")).to_contain_text("backup script")
        screenshot(page, artifacts / f"tokens-{role}-{size}-made.png")

        page.reload()  # shown once: not after a reload
        expect(page.locator("#token-secret")).to_have_count(0)
        assert secret not in page.content()

        page.once("dialog", lambda dialog: dialog.accept())
        page.get_by_role("button", name="Revoke backup script").click()
        expect(page.locator(f"#token-{made.pk}")).to_contain_text("Revoked")
        assert off_the_page_thread(lambda: ApiToken.objects.get(pk=made.pk).revoked_at) is not None
        screenshot(page, artifacts / f"tokens-{role}-{size}-revoked.png")
