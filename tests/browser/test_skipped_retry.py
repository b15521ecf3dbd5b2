"""Skipped page → Retry → the next cycle ingests the set → it is on the Packages page, in Chromium."""

import pytest
from playwright.sync_api import expect

from ingestion.models import SkippedPackage, SkipReason
from tests.support.browser import log_in, off_the_page_thread
from tests.support.ingestion import run_cycle, world

pytestmark = pytest.mark.browser

MESSAGES = [
    {"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 40_000}]}},
    {"id": 12, "document": {"name": "pebble.stl", "size": 50, "seed": 1}},
]


def test_retry_a_skipped_package_until_it_is_a_package(
    live_server, transactional_db, ingest_world, storage, settings, django_user_model, page, artifacts
):
    settings.INGEST_MAX_PACKAGE_BYTES = 10_000  # dragon.zip is too large, pebble.stl goes through
    off_the_page_thread(lambda: ingest_world(world(messages=MESSAGES)))
    off_the_page_thread(run_cycle)
    assert SkippedPackage.objects.get().reason == SkipReason.SIZE_LIMIT

    log_in(page, live_server.url, django_user_model)
    page.goto(f"{live_server.url}/skipped/")
    row = page.locator("tbody tr", has_text="dragon.zip")
    expect(row.locator(".badge", has_text="Too large")).to_be_visible()
    expect(row).to_contain_text("the largest package the console takes")
    expect(page.locator(".pill", has_text="Too large")).to_contain_text("1")
    page.screenshot(path=artifacts / "skipped.png", full_page=True)

    row.get_by_role("button", name="Retry dragon.zip").click()
    queued = page.locator("tbody tr", has_text="Queued for retry")
    expect(queued).to_contain_text("dragon.zip")
    page.screenshot(path=artifacts / "skipped-retried.png", full_page=True)
    assert not SkippedPackage.objects.exists()

    settings.INGEST_MAX_PACKAGE_BYTES = 10**9  # the operator raised the limit
    assert off_the_page_thread(run_cycle).ingested == 1

    page.goto(f"{live_server.url}/packages/")
    found = page.locator("tbody tr", has_text="dragon.zip")
    expect(found).to_be_visible()
    expect(page.locator("tbody tr", has_text="pebble.stl")).to_be_visible()
    page.screenshot(path=artifacts / "packages.png", full_page=True)

    found.get_by_role("link", name="dragon.zip").click()
    expect(page.get_by_role("heading", name="dragon.zip")).to_be_visible()
    expect(page.locator(".file-tree")).to_contain_text("body.stl")
    page.screenshot(path=artifacts / "package-detail.png", full_page=True)

    page.goto(f"{live_server.url}/skipped/")
    expect(page.get_by_text("Nothing skipped: every archive set found so far went through.")).to_be_visible()
