"""In Chromium: the grid of previews, a package's preview and picking another image, and its collection."""

import pytest
from playwright.sync_api import expect

from tests.support.browser import log_in, off_the_page_thread
from tests.support.ingestion import run_cycle, world

pytestmark = pytest.mark.browser

MESSAGES = [
    {"id": 10, "photo": {"caption": "Castle walls, painted"}, "album": 3},
    {
        "id": 11,
        "album": 3,
        "document": {
            "name": "castle-walls.zip",
            "archive": [
                {"path": "castle/walls.stl", "size": 3000},
                {"path": "castle/renders/front.jpg", "picture": True},
                {"path": "castle/renders/top.png", "picture": True},
            ],
        },
    },
    {"id": 12, "reply_to": 11, "document": {"name": "castle-gate.zip", "archive": [{"path": "gate.stl", "size": 900}]}},
]


def test_grid_preview_picker_and_collection(
    live_server, transactional_db, ingest_world, storage, django_user_model, page, artifacts
):
    off_the_page_thread(lambda: ingest_world(world(messages=MESSAGES)))
    assert off_the_page_thread(run_cycle).ingested == 2

    log_in(page, live_server.url, django_user_model)
    page.goto(f"{live_server.url}/packages/")
    page.get_by_role("link", name="Grid of previews").click()
    cards = page.locator(".package-card")
    expect(cards).to_have_count(2)
    image = page.get_by_role("img", name="Preview of castle-walls.zip")
    expect(image).to_be_visible()
    loaded = "img => img.complete ? img.naturalWidth : new Promise(done => img.onload = () => done(img.naturalWidth))"
    assert image.evaluate(loaded) == 480  # the thumbnail really loaded
    page.screenshot(path=artifacts / "package-grid.png", full_page=True)

    page.get_by_role("link", name="castle-walls.zip").click()
    expect(page.get_by_text("The photo posted with the archive (message 10)")).to_be_visible()
    page.get_by_role("img", name="castle/renders/top.png").click()
    page.get_by_role("button", name="Use this image").click()
    expect(page.get_by_text("Preview changed.")).to_be_visible()
    expect(page.get_by_text("From the archive: castle/renders/top.png")).to_be_visible()
    expect(page.get_by_role("link", name="castle", exact=True)).to_be_visible()
    expect(page.get_by_text("Grouped because: Replies to one another")).to_be_visible()
    page.screenshot(path=artifacts / "package-preview-picker.png", full_page=True)

    page.reload()  # the choice is kept
    expect(page.get_by_text("From the archive: castle/renders/top.png")).to_be_visible()

    page.get_by_role("link", name="castle", exact=True).click()
    expect(page.get_by_role("heading", name="castle", exact=True)).to_be_visible()
    expect(page.locator(".package-card")).to_have_count(2)
    page.get_by_label("Name").fill("Castle set")
    page.get_by_role("button", name="Rename").click()
    expect(page.get_by_role("heading", name="Castle set")).to_be_visible()
    page.screenshot(path=artifacts / "collection.png", full_page=True)
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Dissolve").click()
    expect(page.get_by_role("heading", name="Collections")).to_be_visible()
    expect(page.get_by_text("No collections yet.")).to_be_visible()
