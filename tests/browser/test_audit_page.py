"""The Audit page in Chromium, as an operator and as a viewer, wide and on a phone: it fits, its console is
quiet, its filter answers in place; screenshots in test-artifacts/audit-*.png."""

import pytest
from django.test import Client
from playwright.sync_api import expect

from core.models import Notification
from tests.support.browser import SIZES, log_in_as, off_the_page_thread, quiet_page, screenshot, team_add

pytestmark = pytest.mark.browser


def _people_and_their_writes(django_user_model):
    """Vera (operator) marks a notification read and logs out; Victor (viewer) is refused a change."""
    team_add(django_user_model)
    notification = Notification.objects.create(type="t", severity="info", title="Disk almost full", subject="disk")
    operator = Client()
    operator.force_login(django_user_model.objects.get(username="vera"))
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
    with quiet_page(browser, size=size) as page:
        log_in_as(page, live_server.url, role)
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
        screenshot(page, artifacts / f"audit-{role}-{size}.png")

        page.get_by_label("Person or token").fill("victor")
        page.get_by_label("Person or token").press("Enter")
        expect(table).not_to_contain_text("notifications-mark-read")
        expect(page.locator("#audit-table")).to_contain_text("POST notifications-mark-all-read")
        assert "actor=victor" in page.url
        screenshot(page, artifacts / f"audit-{role}-{size}-filtered.png")
