"""The Audit page in Chromium, as an operator and as a viewer, wide and on a phone: it fits, its console is
quiet, its filter answers in place; screenshots in test-artifacts/audit-*.png."""

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from playwright.sync_api import expect

from core.models import Notification
from core.roles import OPERATORS_GROUP
from tests.support.browser import off_the_page_thread, top

pytestmark = pytest.mark.browser

SIZES = {"wide": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
PASSWORD = "pw-long-enough"


def _people_and_their_writes(django_user_model):
    """Vera (operator) marks a notification read and logs out; Victor (viewer) is refused a change."""
    vera = django_user_model.objects.create_user(username="vera", password=PASSWORD)
    vera.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    django_user_model.objects.create_user(username="victor", password=PASSWORD)
    notification = Notification.objects.create(type="t", severity="info", title="Disk almost full", subject="disk")
    operator = Client()
    operator.force_login(vera)
    operator.post(f"/notifications/{notification.pk}/read/")
    operator.post("/logout/")
    viewer = Client()
    viewer.force_login(django_user_model.objects.get(username="victor"))
    viewer.post("/notifications/read-all/")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("role", ["vera", "victor"])
def test_the_audit_page_fits_and_filters(
    live_server, transactional_db, django_user_model, browser, artifacts, role, size
):
    off_the_page_thread(lambda: _people_and_their_writes(django_user_model))
    context = browser.new_context(viewport=SIZES[size])
    context.set_default_timeout(10_000)
    page = context.new_page()
    problems = []
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Username").fill(role)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.locator(".team-menu > summary").click()
    page.get_by_role("link", name="Audit").first.click()
    expect(page.get_by_role("heading", name="Audit")).to_be_visible()
    table = page.locator("#audit-table")
    expect(table).to_contain_text("POST notifications-mark-read")
    expect(table).to_contain_text("POST logout")
    expect(table).to_contain_text("victor")
    if role == "vera":
        expect(table).to_contain_text("127.0.0.1")
    else:
        expect(table).not_to_contain_text("127.0.0.1")
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1")
    top(page)
    page.screenshot(path=artifacts / f"audit-{role}-{size}.png", full_page=True)

    page.get_by_label("Person or token").fill("victor")
    page.get_by_label("Person or token").press("Enter")
    expect(table).not_to_contain_text("notifications-mark-read")
    expect(page.locator("#audit-table")).to_contain_text("POST notifications-mark-all-read")
    assert "actor=victor" in page.url
    top(page)
    page.screenshot(path=artifacts / f"audit-{role}-{size}-filtered.png", full_page=True)
    context.close()
    assert not problems, problems
