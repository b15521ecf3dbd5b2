"""In Chromium, on a phone and a wide screen: the operator sets an account's ingestion hours and bandwidth in its
dialog (a bad cap is kept beside its error, then fixed), the row says why ingestion waits; a channel's share is set
in its row. The console stays quiet throughout."""

from datetime import UTC, datetime

import pytest
from playwright.sync_api import expect

from accounts.models import TelegramAccount
from ingestion.models import Channel
from tests.support.browser import SIZES, log_in_as_operator, off_the_page_thread, quiet_page, screenshot
from tests.support.ingestion import READER, SOURCE, world

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("size", SIZES)
def test_hours_bandwidth_and_share_from_the_console(
    live_server, transactional_db, ingest_world, django_user_model, browser, artifacts, at, size
):
    at(datetime(2026, 11, 27, 12, 0, tzinfo=UTC))  # 13:00 in Berlin
    off_the_page_thread(lambda: ingest_world(world(messages=[])))
    reader = off_the_page_thread(lambda: TelegramAccount.objects.get(phone=READER))
    source = off_the_page_thread(lambda: Channel.objects.get(chat__telegram_id=SOURCE))
    with quiet_page(browser, size=size) as page:
        log_in_as_operator(page, live_server.url, django_user_model)
        page.goto(f"{live_server.url}/accounts/")
        row = page.locator(f"#account-{reader.pk}")
        expect(row).to_contain_text("Ingests all day · bandwidth no cap")
        row.get_by_role("link", name="Change").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_label("Transfers from (hour)").fill("22")
        dialog.get_by_label("Until (hour)").fill("6")
        dialog.get_by_label("Time zone").fill("Europe/Berlin")
        dialog.get_by_label("Bandwidth cap").fill("lots")
        dialog.get_by_role("button", name="Save").click()
        expect(dialog).to_contain_text("is not a size")
        expect(dialog.get_by_label("Bandwidth cap")).to_have_value("lots")
        screenshot(page, artifacts / f"ingest-limits-{size}-error.png")

        dialog.get_by_label("Bandwidth cap").fill("2 MB/s")
        dialog.get_by_role("button", name="Save").click()
        expect(page.get_by_role("dialog")).to_have_count(0)
        expect(row).to_contain_text("Ingests 22:00–06:00 (Europe/Berlin) · bandwidth 2 MB/s")
        expect(row).to_contain_text("Waiting for its ingestion hours")
        screenshot(page, artifacts / f"ingest-limits-{size}-saved.png")
        saved = off_the_page_thread(lambda: TelegramAccount.objects.get(pk=reader.pk))
        assert (saved.ingest_start_hour, saved.ingest_end_hour, saved.ingest_bytes_per_second) == (22, 6, 2_000_000)

        page.goto(f"{live_server.url}/channels/")
        channel_row = page.locator(f"#channel-{source.pk}")
        channel_row.get_by_label("Share a cycle").fill("5")
        channel_row.get_by_role("button", name="Save").click()
        expect(page.locator(f"#channel-{source.pk}")).to_contain_text("Saved.")
        screenshot(page, artifacts / f"channel-share-{size}.png")
        assert off_the_page_thread(lambda: Channel.objects.get(pk=source.pk).sets_per_cycle) == 5
        page.goto(f"{live_server.url}/channels/{source.pk}/")
        expect(page.get_by_text("Share of a cycle")).to_be_visible()
        screenshot(page, artifacts / f"channel-share-detail-{size}.png")
