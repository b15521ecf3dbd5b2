"""Searching the Packages page by a path inside an archive finds the package, in Chromium."""

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser import log_in, off_the_page_thread
from tests.support.ingestion import DRAGON_AND_CASTLE, run_cycle, world

pytestmark = pytest.mark.browser


def test_search_by_a_path_inside_an_archive(
    live_server, transactional_db, ingest_world, storage, django_user_model, page, artifacts
):
    off_the_page_thread(lambda: ingest_world(world(messages=DRAGON_AND_CASTLE)))
    assert off_the_page_thread(run_cycle).ingested == 2

    log_in(page, live_server.url, django_user_model)
    page.goto(f"{live_server.url}/packages/")
    rows = page.locator(".package-table tbody tr:not(.empty-row)")
    expect(rows).to_have_count(2)

    search = page.get_by_label("Search packages")
    search.press_sequentially("left.stl", delay=30)
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("dragon.zip")
    expect(rows.first.locator(".matches")).to_contain_text("dragon/wings/left.stl")
    expect(page).to_have_url(f"{live_server.url}/packages/?q=left.stl")
    page.screenshot(path=artifacts / "package-search.png", full_page=True)

    search.fill("")
    search.press_sequentially("gate.stl", delay=30)
    expect(rows.first).to_contain_text("castle.7z.001")
    expect(rows).to_have_count(1)

    search.fill("")
    search.press_sequentially("griffin", delay=30)
    expect(page.get_by_text("No package matches “griffin”")).to_be_visible()

    page.reload()  # the pushed URL is a page of its own
    expect(page.get_by_label("Search packages")).to_have_value("griffin")
    expect(page.get_by_text("No package matches “griffin”")).to_be_visible()

    # One package's page names where it came from and went, each a link to that channel's page.
    page.goto(f"{live_server.url}/packages/")
    page.get_by_role("link", name="dragon.zip").click()
    expect(page.get_by_role("link", name="Archive")).to_be_visible()
    expect(page.get_by_role("link", name=re.compile(r"^run #\d+$"))).to_be_visible()
    page.screenshot(path=artifacts / "package-detail.png", full_page=True)
    page.get_by_role("link", name="Models A").click()
    expect(page.get_by_role("heading", name="Models A")).to_be_visible()
