"""Browsing packages in Chromium: a substring search counts the matching files and the tree highlights them,
the creator is edited in place and filtered by, and a repack is answered."""

import pytest
from playwright.sync_api import expect

from tests.support.browser import log_in, off_the_page_thread
from tests.support.ingestion import run_cycle, world

pytestmark = pytest.mark.browser

DRAGON = [
    {"path": "dragon/body.stl", "size": 2000},
    {"path": "dragon/wings/left-wing.stl", "size": 1500},
    {"path": "dragon/wings/right-wing.stl", "size": 1500},
]
MESSAGES = [
    {"id": 11, "document": {"name": "dragon.zip", "archive": DRAGON}},
    {"id": 12, "document": {"name": "castle.zip", "archive": [{"path": "castle/tower.stl", "size": 3000}]}},
    {
        "id": 13,
        "document": {
            "name": "Dragon (repack).7z",
            "archive": [{"path": f"Dragon/{e['path']}", "size": e["size"], "seed": e["path"]} for e in DRAGON],
        },
    },
]


def test_search_edit_filter_and_answer_a_repack(
    live_server, transactional_db, ingest_world, storage, django_user_model, page, artifacts
):
    off_the_page_thread(lambda: ingest_world(world(messages=MESSAGES)))
    assert off_the_page_thread(run_cycle).ingested == 3

    log_in(page, live_server.url, django_user_model)
    page.goto(f"{live_server.url}/packages/")
    rows = page.locator(".package-table tbody tr:not(.empty-row)")
    expect(rows).to_have_count(3)

    # "ing.st" starts inside a word: a substring, not a word prefix.
    page.get_by_label("Search packages").press_sequentially("ing.st", delay=30)
    expect(rows).to_have_count(2)
    expect(page).to_have_url(f"{live_server.url}/packages/?q=ing.st")
    expect(rows.first).to_contain_text("2 files inside match")
    page.screenshot(path=artifacts / "package-browse-search.png", full_page=True)

    rows.filter(has_text="dragon.zip").get_by_role("link", name="dragon.zip").click()
    expect(page.get_by_text("match “ing.st”")).to_be_visible()
    expect(page.locator(".file-entry.is-match")).to_have_count(2)
    page.screenshot(path=artifacts / "package-browse-tree.png", full_page=True)

    page.goto(f"{live_server.url}/packages/")
    castle = rows.filter(has_text="castle.zip")
    castle.get_by_role("button", name="Edit the creator and tags of castle.zip").click()
    castle.get_by_label("Creator", exact=True).fill("Bob the Builder")
    castle.get_by_label("Tags (commas between)").fill("terrain, castles")
    page.screenshot(path=artifacts / "package-browse-edit.png", full_page=True)
    castle.get_by_role("button", name="Save").click()
    expect(castle).to_contain_text("Saved.")
    castle.get_by_role("link", name="Bob the Builder").click()
    expect(rows).to_have_count(1)
    expect(page.get_by_label("Creator", exact=True)).to_have_value("Bob the Builder")

    page.goto(f"{live_server.url}/packages/")
    page.get_by_label("Likely repacks").check()
    expect(rows).to_have_count(1)
    page.screenshot(path=artifacts / "package-browse-filters.png", full_page=True)
    rows.first.get_by_role("link", name="Dragon (repack).7z").click()
    expect(page.get_by_text("100 %")).to_be_visible()
    page.screenshot(path=artifacts / "package-browse-repack.png", full_page=True)
    page.get_by_role("button", name="Skip future copies").click()
    expect(page.get_by_text("Future copies with this listing will count as duplicates")).to_be_visible()
