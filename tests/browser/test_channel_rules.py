"""A channel's page → What it takes: preview, a bad pattern kept in the form, save, the whole history counted
first; as an operator and as a viewer, wide and on a phone, in Chromium."""

import pytest
from playwright.sync_api import expect

from ingestion.models import Channel, StartPoint
from ingestion.services import channel_rules_update
from tests.support.browser import SIZES, log_in_as, log_in_as_operator, off_the_page_thread, quiet_page, top
from tests.support.ingestion import ARCHIVES, SOURCE, world

pytestmark = pytest.mark.browser


@pytest.fixture
def source(transactional_db, ingest_world) -> Channel:
    off_the_page_thread(lambda: ingest_world(world(messages=ARCHIVES)))
    channel = Channel.objects.get(chat__telegram_id=SOURCE)
    return channel_rules_update(channel=channel, start_from=StartPoint.NOW)


def test_an_operator_tries_saves_and_takes_the_whole_history(
    live_server, source, django_user_model, browser, artifacts
):
    with quiet_page(browser, size="wide") as page:
        log_in_as_operator(page, live_server.url, django_user_model)
        page.goto(f"{live_server.url}/channels/{source.pk}/")
        rules = page.locator("#channel-rules")
        expect(rules.get_by_role("heading", name="What it takes")).to_be_visible()

        rules.get_by_label("ZIP").check()
        rules.get_by_label("7z").check()
        rules.get_by_label("Smallest").fill("1 kB")
        rules.get_by_label("Largest").fill("500 MB")
        rules.get_by_role("button", name="Preview").click()
        expect(rules.get_by_role("heading", name="The last 100 documents: 2 of 3 sets taken")).to_be_visible()
        expect(rules.locator("tr", has_text="bust.stl")).to_contain_text("Model files")
        top(page)
        page.screenshot(path=artifacts / "channel-rules-operator-preview-1440.png", full_page=True)

        rules.get_by_label("Name pattern").fill("dragon([")
        rules.get_by_role("button", name="Save rules").click()
        expect(rules.get_by_text("The name pattern is not a valid regular expression")).to_be_visible()
        expect(rules.get_by_label("Name pattern")).to_have_value("dragon([")
        expect(rules.get_by_label("Largest")).to_have_value("500 MB")
        page.screenshot(path=artifacts / "channel-rules-operator-error-1440.png", full_page=True)

        rules.get_by_label("Name pattern").fill("dragon|big")
        rules.get_by_role("button", name="Save rules").click()
        expect(rules.get_by_text("Saved.")).to_be_visible()
        saved = Channel.objects.get(pk=source.pk)
        assert (saved.take_kinds, saved.name_pattern, saved.max_bytes) == (["7z", "zip"], "dragon|big", 500_000_000)

        rules.get_by_label("The whole history").check()
        rules.get_by_role("button", name="Save rules").click()
        expect(rules.locator("#history-count")).to_contain_text("The whole history of Models A: 3 sets")
        expect(rules.locator("#history-count")).to_contain_text("These rules take 2 of them")
        assert Channel.objects.get(pk=source.pk).start_from == StartPoint.NOW  # not before it is confirmed
        for viewport in SIZES.values():
            page.set_viewport_size(viewport)
            top(page)
            page.screenshot(path=artifacts / f"channel-rules-operator-history-{viewport['width']}.png", full_page=True)
        rules.get_by_role("button", name="Take the whole history").click()
        expect(rules.get_by_text("Saved.")).to_be_visible()
        assert Channel.objects.get(pk=source.pk).start_from == StartPoint.HISTORY


def test_a_viewer_reads_the_rules_in_words(live_server, source, django_user_model, browser, artifacts):
    with quiet_page(browser, size="wide") as page:
        django_user_model.objects.create_user(username="viewer", password="s3cret-pass")
        log_in_as(page, live_server.url, "viewer", "s3cret-pass")

        page.goto(f"{live_server.url}/channels/{source.pk}/")
        rules = page.locator("#channel-rules")
        expect(rules.locator(".rules-summary")).to_be_visible()
        expect(rules.locator(".rules-summary div", has_text="Start")).to_contain_text("From now")
        expect(rules.locator(".rules-summary div", has_text="Kinds taken")).to_contain_text("Every kind")
        expect(rules.get_by_role("button", name="Save rules")).to_have_count(0)
        for viewport in SIZES.values():
            page.set_viewport_size(viewport)
            top(page)
            page.screenshot(path=artifacts / f"channel-rules-viewer-{viewport['width']}.png", full_page=True)
