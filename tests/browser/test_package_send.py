"""Send to Telegram, and the catalog audit on the Operations page, in Chromium with a real Celery worker:
search → the package with its preview → pick another preview → send to a chat → the chat holds the parts;
its collection sent to a person the account has a private chat with; then an audit."""

import pytest
from playwright.sync_api import expect

from packages.models import Package
from tests.support.browser import Shots, celery_worker, log_in_as_superuser, off_the_page_thread
from tests.support.ingestion import READER, WRITER, dump, run_cycle, world

pytestmark = pytest.mark.browser


def _names_in(chat_id: int) -> list[str]:
    return [m["document"]["name"] for m in off_the_page_thread(lambda: dump(chat_id))["messages"] if m["document"]]


FRIENDS = 5000
MESSAGES = [
    {"id": 10, "photo": {"caption": "Castle walls, painted"}, "album": 3},
    {
        "id": 11,
        "album": 3,
        "document": {
            "name": "castle-walls.zip",
            "archive": [
                {"path": "castle/walls.stl", "size": 250_000, "seed": 4},
                {"path": "castle/renders/front.jpg", "picture": True},
                {"path": "castle/renders/top.png", "picture": True},
            ],
        },
    },
    {"id": 12, "reply_to": 11, "document": {"name": "castle-gate.zip", "archive": [{"path": "gate.stl", "size": 900}]}},
]
FRIENDS_CHAT = {"id": FRIENDS, "title": "Friends", "type": "supergroup", "members": [READER, WRITER]}
DANA = 7001
DANA_PERSON = {"id": DANA, "title": "Dana", "type": "user", "username": "dana_prints", "members": [WRITER]}


def test_send_a_package_to_a_chat_and_audit_the_catalog(
    live_server, transactional_db, ingest_world, storage, tmp_path, django_user_model, page, artifacts
):
    data = world(messages=MESSAGES, more_chats=[FRIENDS_CHAT, DANA_PERSON], limits={"upload_max_bytes": 100_000})
    off_the_page_thread(lambda: ingest_world(data))
    assert off_the_page_thread(run_cycle).ingested == 2
    shot = Shots(page, artifacts, "package-send")

    with celery_worker(tmp_path) as worker:
        log_in_as_superuser(page, live_server.url, django_user_model, shot)
        worker.wait_until_started()

        page.goto(f"{live_server.url}/packages/")
        page.get_by_label("Search packages").press_sequentially("castle", delay=30)
        page.get_by_role("link", name="castle-walls.zip").click()
        expect(page.get_by_text("The photo posted with the archive (message 10)")).to_be_visible()
        page.get_by_role("img", name="castle/renders/top.png").click()
        page.get_by_role("button", name="Use this image").click()
        expect(page.get_by_text("From the archive: castle/renders/top.png")).to_be_visible()
        page.get_by_label("Chat").select_option(label="Friends")
        shot("package-picked")
        page.get_by_role("button", name="Send").click()

        walls = off_the_page_thread(lambda: list(Package.objects.get(file_name="castle-walls.zip").dest_part_names))
        expect(page.get_by_text(f"Sending {len(walls)} parts to Friends.")).to_be_visible()
        sends = page.locator("#package-sends")
        expect(sends).to_contain_text(f"{len(walls)} of {len(walls)} parts", timeout=30_000)
        expect(sends).to_contain_text("Success")
        expect(sends.get_by_role("img", name="Preview of castle-walls.zip")).to_be_visible()  # as its card shows
        shot("sent")
        assert _names_in(FRIENDS) == walls, "the chat holds the package's parts, in order"

        # Its collection (castle-gate replies to it; named after the words the two share) goes as one send, to
        # Dana, whom the writer has a private chat with: people have their own group in the picker.
        page.get_by_role("link", name="castle", exact=True).click()
        picker = page.get_by_label("Chat")
        expect(picker.locator("optgroup[label='People, through Writer'] option")).to_have_text(["Dana (@dana_prints)"])
        picker.evaluate("select => select.size = select.options.length + 3")  # drawn open, for the screenshot
        shot("collection-people")
        picker.select_option(label="Dana (@dana_prints)")
        page.get_by_role("button", name="Send").click()
        expect(page.get_by_text(f"Sending {len(walls) + 1} parts to Dana.")).to_be_visible()
        expect(page.locator("#package-sends")).to_contain_text("Success", timeout=30_000)
        shot("collection-sent")
        assert _names_in(DANA) == [*walls, "castle-gate.zip"], "Dana holds the collection's parts, in order"
        assert _names_in(FRIENDS) == walls

        page.goto(f"{live_server.url}/operations/")
        page.get_by_role("button", name="Audit now").click()
        expect(page.get_by_text("Audit queued")).to_be_visible()
        for _ in range(60):
            if page.locator("#catalog-audit").get_by_text("all in place").count():
                break
            page.wait_for_timeout(500)
            page.reload()
        audit = page.locator("#catalog-audit")
        expect(audit).to_contain_text(f"2 packages against {len(walls) + 1} destination documents")
        expect(audit).to_contain_text("messages 1–12")
        shot("audit")
