"""Send to Telegram from a package's page, and the catalog audit on the Operations page, in Chromium with a real
Celery worker: search → the package → send to a chat → the chat holds the parts."""

import pytest
from playwright.sync_api import expect

from tests.browser.journey_helpers import Shots, celery_worker, log_in_as_superuser
from tests.browser.test_skipped_retry import off_the_page_thread
from tests.ingestion.conftest import READER, WRITER, run_cycle, world
from tests.ingestion.test_pipeline import dump

pytestmark = pytest.mark.browser

FRIENDS = 5000
MESSAGES = [
    {"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}},
    {"id": 30, "document": {"name": "huge.zip", "size": 250_000, "seed": 5}},
]
FRIENDS_CHAT = {"id": FRIENDS, "title": "Friends", "type": "supergroup", "members": [READER, WRITER]}


def test_send_a_package_to_a_chat_and_audit_the_catalog(
    live_server, transactional_db, ingest_world, settings, tmp_path, django_user_model, page, artifacts
):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"
    data = world(messages=MESSAGES, more_chats=[FRIENDS_CHAT], limits={"upload_max_bytes": 100_000})
    off_the_page_thread(lambda: ingest_world(data))
    assert off_the_page_thread(run_cycle).ingested == 2
    shot = Shots(page, artifacts, "package-send")

    with celery_worker(tmp_path) as worker:
        log_in_as_superuser(page, live_server.url, django_user_model, shot)
        worker.wait_until_started()

        page.goto(f"{live_server.url}/packages/")
        page.get_by_label("Search packages").press_sequentially("huge", delay=30)
        page.get_by_role("link", name="huge.zip").click()
        expect(page.get_by_role("heading", name="Send to Telegram")).to_be_visible()
        page.get_by_label("Chat").select_option(label="Friends")
        shot("package-picked")
        page.get_by_role("button", name="Send").click()

        expect(page.get_by_text("Sending 3 parts to Friends.")).to_be_visible()
        expect(page.locator("#package-sends")).to_contain_text("3 of 3 parts", timeout=30_000)
        expect(page.locator("#package-sends")).to_contain_text("Success")
        shot("sent")
        copies = [m for m in off_the_page_thread(lambda: dump(FRIENDS))["messages"] if m["document"]]
        assert [m["document"]["name"] for m in copies] == ["huge.zip.001", "huge.zip.002", "huge.zip.003"]

        page.goto(f"{live_server.url}/operations/")
        page.get_by_role("button", name="Audit now").click()
        expect(page.get_by_text("Audit queued")).to_be_visible()
        for _ in range(60):
            if page.locator("#catalog-audit").get_by_text("all in place").count():
                break
            page.wait_for_timeout(500)
            page.reload()
        audit = page.locator("#catalog-audit")
        expect(audit).to_contain_text("2 packages against 4 destination documents")
        expect(audit).to_contain_text("messages 1–30")
        shot("audit")
