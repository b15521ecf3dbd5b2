"""The Audit page in Chromium, as an operator and as a viewer, wide and on a phone: it fits, its console is
quiet, its entries read as sentences, its filter answers in place, and a real ingestion cycle (run by Celery's
own task machinery) is one short entry whose rows open on a click; screenshots in test-artifacts/audit-*.png."""

import pytest
from django.test import Client
from playwright.sync_api import expect

from accounts.models import TelegramAccount
from core.models import AuditEntry, Notification
from ingestion.models import IngestionRun
from ingestion.tasks import ingestion_run_execute
from tests.support.browser import SIZES, log_in_as, off_the_page_thread, quiet_page, screenshot, team_add
from tests.support.ingestion import DRAGON_AND_CASTLE, READER, world

pytestmark = pytest.mark.browser

CAPTIONED = {
    "id": 30,
    "text": "Hills set, pass: hills-v2",
    "document": {"name": "hills.zip", "archive": [{"path": "hills/a.stl", "size": 900}]},
}


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


def _an_ingestion_cycle(ingest_world):
    """A source channel of fifteen packages, ingested by the worker's task as Celery runs it (its audit scope too)."""
    more = [
        {"id": 40 + n, "document": {"name": f"mini-{n}.zip", "archive": [{"path": f"mini/{n}.stl", "size": 500}]}}
        for n in range(12)
    ]
    ingest_world(world(messages=[*DRAGON_AND_CASTLE, CAPTIONED, *more]))
    run = IngestionRun.objects.create(account=TelegramAccount.objects.get(phone=READER), trigger="command")
    ingestion_run_execute.apply(kwargs={"run_id": run.pk}).get()


def _shot(page, artifacts, name: str) -> None:
    screenshot(page, artifacts / f"{name}.png")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("role", ["vera", "victor"])
def test_the_audit_page_fits_reads_and_filters(
    live_server, transactional_db, django_user_model, browser, artifacts, role, size, tmp_path
):
    off_the_page_thread(lambda: _people_and_their_writes(django_user_model))
    with quiet_page(browser, size=size) as page:
        log_in_as(page, live_server.url, role)
        page.locator(".team-menu > summary").click()
        page.get_by_role("link", name="Audit").first.click()
        expect(page.get_by_role("heading", name="Audit")).to_be_visible()
        table = page.locator("#audit-table")
        expect(table).to_contain_text("vera marked read notification Disk almost full")
        expect(table).to_contain_text("vera logged out")
        expect(table).to_contain_text("victor was refused (403): notifications mark all read")
        expect(table).not_to_contain_text("POST ")
        if role == "vera":
            expect(table).to_contain_text("127.0.0.1")
        else:
            expect(table).not_to_contain_text("127.0.0.1")
        _shot(page, artifacts, f"audit-{role}-{size}")

        page.get_by_label("Person or token").fill("victor")
        page.get_by_label("Person or token").press("Enter")
        expect(table).not_to_contain_text("marked read")
        expect(page.locator("#audit-table")).to_contain_text("victor was refused")
        assert "actor=victor" in page.url
        _shot(page, artifacts, f"audit-{role}-{size}-filtered")


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("role", ["vera", "victor"])
def test_an_ingestion_cycle_is_one_short_entry(
    live_server, transactional_db, ingest_world, storage, django_user_model, browser, artifacts, role, size
):
    off_the_page_thread(lambda: team_add(django_user_model))
    off_the_page_thread(lambda: _an_ingestion_cycle(ingest_world))
    [entry] = off_the_page_thread(lambda: list(AuditEntry.objects.filter(via="task")))
    assert entry.changes.count() > 30, "a cycle changes many rows"
    with quiet_page(browser, size=size) as page:
        log_in_as(page, live_server.url, role)
        page.goto(f"{live_server.url}/audit/")
        row = page.locator("#audit-table tbody tr", has_text="Task “ingestion run execute”:")
        expect(row).to_contain_text("packages created")
        height = page.evaluate("document.documentElement.scrollHeight")
        assert height < 1600, f"the page is {height} px tall with one cycle folded"
        _shot(page, artifacts, f"audit-cycle-{role}-{size}")

        row.locator("summary").click()
        expect(row.locator(".audit-changes")).to_contain_text("Created package")
        expect(page.locator("body")).not_to_contain_text("hills-v2")
        _shot(page, artifacts, f"audit-cycle-{role}-{size}-open")
        kinds = page.get_by_label("Kind").locator("option").all_inner_texts()
        assert "Package" in kinds and not any("." in kind for kind in kinds), kinds
