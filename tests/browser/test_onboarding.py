"""In Chromium: an operator previews an invite and joins with an account, joins the sources with a new account,
creates the destination and sees each writer's outcome, and a bad link keeps what was typed, at 1440 and 390 px;
a viewer sees the channels without any of it. Every page's console stays quiet."""

import pytest
from playwright.sync_api import expect

from tests.support.browser import SIZES, log_in, log_in_as, off_the_page_thread, quiet_page
from tests.support.onboarding import CLUB_INVITE, onboarding_world

pytestmark = pytest.mark.browser
# Onboarding waits on the sandbox Telegram: longer than the toolbox's 10 s.
TIMEOUT_MS = 15_000


def shot(page, path) -> None:
    # caret "initial": Playwright's default hides the caret by giving every input a style attribute, which htmx
    # then carries into the swapped form (and the Content-Security-Policy refuses).
    page.evaluate("window.scrollTo(0, 0)")  # or the sticky top bar is drawn where the page was scrolled to
    page.screenshot(path=path, full_page=True, caret="initial")


def test_an_operator_joins_and_creates_from_the_channels_page(
    live_server, transactional_db, ingest_world, django_user_model, browser, artifacts
):
    world = off_the_page_thread(lambda: ingest_world(onboarding_world()))
    with quiet_page(browser, size="wide") as page:
        page.set_default_timeout(TIMEOUT_MS)
        log_in(page, live_server.url, django_user_model)
        page.goto(f"{live_server.url}/channels/")
        card = page.locator("section.onboarding")
        expect(card.get_by_role("heading", name="Add channels")).to_be_visible()
        shot(page, artifacts / "onboarding-1440-01-channels.png")

        join = page.locator("#join-panel")
        join.get_by_label("Account").select_option(label="Newcomer (+15550000002)")
        join.get_by_label("@username or invite link").fill(CLUB_INVITE)
        join.get_by_role("button", name="Preview").click()
        preview = page.get_by_role("status", name="Preview")
        expect(preview).to_contain_text("Prints club")
        expect(preview).to_contain_text("not shown before joining")
        shot(page, artifacts / "onboarding-1440-02-preview.png")

        page.locator("#join-panel").get_by_role("button", name="Join").click()
        expect(page.locator("#join-panel .alert")).to_contain_text("Newcomer: Joined — Prints club")
        expect(page.locator("#channel-rows tr", has_text="Prints club")).to_contain_text("Newcomer")
        shot(page, artifacts / "onboarding-1440-03-joined.png")

        sources = page.locator("#sources-panel")
        sources.get_by_label("Account").select_option(label="Writer (+15550000003)")
        sources.get_by_role("button", name="Join the sources").click()
        outcomes = page.get_by_role("list", name="What each join came to")
        expect(outcomes).to_contain_text("Models A: Joined")
        expect(outcomes).to_contain_text("Prints club: Joined")  # by the invite link Newcomer joined with
        shot(page, artifacts / "onboarding-1440-04-sources.png")

        card.get_by_role("link", name="Create destination channel").click()
        dialog = page.get_by_role("dialog")
        dialog.get_by_label("Created and owned by").select_option(label="Reader (+15550000001)")
        dialog.get_by_label("Title").fill("Stash archive")
        dialog.get_by_label("Writer (+15550000003)").check()
        dialog.get_by_label("Shy (+15550000004)").check()
        shot(page, artifacts / "onboarding-1440-05-create.png")
        dialog.get_by_role("button", name="Create channel").click()
        expect(dialog.get_by_role("heading", name="Stash archive is the destination")).to_be_visible()
        expect(dialog).to_contain_text("privacy settings")
        shot(page, artifacts / "onboarding-1440-06-created.png")
        dialog.get_by_role("button", name="Done").click()
        expect(page.locator("#channel-rows tr.is-destination")).to_contain_text("Stash archive")
        assert [chat["title"] for chat in world.chats() if chat["title"] == "Stash archive"] == ["Stash archive"]

        page.locator("#channel-rows").get_by_role("link", name="Models A").click()
        page.get_by_label("Leave Models A on Telegram with").select_option(label="Writer")
        shot(page, artifacts / "onboarding-1440-07-channel.png")
        page.get_by_role("button", name="Leave channel").click()
        expect(page.get_by_text("Writer left Models A; it no longer reads it.")).to_be_visible()
        shot(page, artifacts / "onboarding-1440-08-left.png")
        assert world.membership(5001, "+15550000003") is None


def test_a_bad_link_on_a_phone_keeps_what_was_typed(
    live_server, transactional_db, ingest_world, django_user_model, browser, artifacts
):
    off_the_page_thread(lambda: ingest_world(onboarding_world()))
    with quiet_page(browser, size="phone", refusals=(400,)) as page:
        page.set_default_timeout(TIMEOUT_MS)
        log_in(page, live_server.url, django_user_model)
        page.goto(f"{live_server.url}/channels/")
        shot(page, artifacts / "onboarding-390-01-channels.png")

        join = page.locator("#join-panel")
        join.get_by_label("@username or invite link").fill("https://t.me/+OldInvite001")
        join.get_by_role("button", name="Preview").click()
        expect(page.locator("#join-panel .field-error")).to_contain_text("This invite link has expired or was revoked")
        expect(page.locator("#join-panel").get_by_label("@username or invite link")).to_have_value(
            "https://t.me/+OldInvite001"
        )
        shot(page, artifacts / "onboarding-390-02-error.png")

        page.locator("#join-panel").get_by_label("@username or invite link").fill("@fresh_finds")
        page.locator("#join-panel").get_by_role("button", name="Preview").click()
        expect(page.get_by_role("status", name="Preview")).to_contain_text("Fresh finds")
        shot(page, artifacts / "onboarding-390-03-preview.png")


@pytest.mark.parametrize("size", SIZES)
def test_a_viewer_sees_the_channels_without_joining_or_creating(
    live_server, transactional_db, ingest_world, django_user_model, browser, artifacts, size
):
    off_the_page_thread(lambda: ingest_world(onboarding_world()))
    django_user_model.objects.create_user(username="viewer", password="v1ew-pass")
    with quiet_page(browser, size=size) as page:
        page.set_default_timeout(TIMEOUT_MS)
        log_in_as(page, live_server.url, "viewer", "v1ew-pass")

        page.goto(f"{live_server.url}/channels/")
        expect(page.locator("#channel-rows tr", has_text="Models A")).to_be_visible()
        expect(page.get_by_role("heading", name="Add channels")).to_have_count(0)
        shot(page, artifacts / f"onboarding-viewer-{SIZES[size]['width']}-channels.png")
        page.locator("#channel-rows").get_by_role("link", name="Models A").click()
        expect(page.get_by_role("heading", name="Models A")).to_be_visible()
        expect(page.get_by_role("button", name="Leave channel")).to_have_count(0)
        shot(page, artifacts / f"onboarding-viewer-{SIZES[size]['width']}-channel.png")
