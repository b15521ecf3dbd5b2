"""The Tokens page in Chromium, as an operator and as a viewer, wide and on a phone: make a token (its secret shown
once, copied with the button), see it listed, revoke it; it fits and its console is quiet. Screenshots in
test-artifacts/tokens-*.png."""

import hashlib

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from core.models import ApiToken
from core.roles import OPERATORS_GROUP
from core.tokens import api_token_create
from tests.support.browser import off_the_page_thread, top

pytestmark = pytest.mark.browser

SIZES = {"wide": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
PASSWORD = "pw-long-enough"


def _people(django_user_model):
    vera = django_user_model.objects.create_user(username="vera", password=PASSWORD)
    vera.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    victor = django_user_model.objects.create_user(username="victor", password=PASSWORD)
    api_token_create(owner=victor, name="victor's dashboard", scope="read")


def _fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("role", ["vera", "victor"])
def test_the_tokens_page_makes_lists_and_revokes(
    live_server, transactional_db, django_user_model, browser, artifacts, role, size
):
    off_the_page_thread(lambda: _people(django_user_model))
    context = browser.new_context(viewport=SIZES[size], permissions=["clipboard-read", "clipboard-write"])
    context.set_default_timeout(10_000)
    page = context.new_page()
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Username").fill(role)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.goto(f"{live_server.url}/tokens/")
    expect(page.get_by_role("heading", name="Tokens", exact=True)).to_be_visible()
    listed = page.locator("#tokens-body table")
    if role == "vera":
        expect(listed).to_contain_text("victor's dashboard")  # operators see everyone's
        expect(page.get_by_label("Scope").locator("option")).to_have_count(2)
    else:
        expect(page.get_by_label("Scope").locator("option")).to_have_count(1)  # viewers: read only
    top(page)
    page.screenshot(path=artifacts / f"tokens-{role}-{size}.png", full_page=True)

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
    assert _fits(page)
    top(page)
    page.screenshot(path=artifacts / f"tokens-{role}-{size}-made.png", full_page=True)

    page.reload()  # shown once: not after a reload
    expect(page.locator("#token-secret")).to_have_count(0)
    assert secret not in page.content()

    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Revoke backup script").click()
    expect(page.locator(f"#token-{made.pk}")).to_contain_text("Revoked")
    assert off_the_page_thread(lambda: ApiToken.objects.get(pk=made.pk).revoked_at) is not None
    assert _fits(page)
    top(page)
    page.screenshot(path=artifacts / f"tokens-{role}-{size}-revoked.png", full_page=True)
    context.close()
    assert not problems, problems
