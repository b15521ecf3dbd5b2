"""Captions and passwords in Chromium, as an operator and as a viewer, at 1440 and 390 px: the package page shows
the source caption (its password masked for viewers) and which password opened the archive; the Send form starts
from the caption and previews the message as it will arrive, refusing one too long; the channel page keeps the
channel's passwords (hints only, operators only). The console stays quiet throughout."""

from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from core.roles import OPERATORS_GROUP
from ingestion.models import Channel
from packages.models import Package
from tests.support.archives import PASSWORD, files, run, tool
from tests.support.browser import Shots, log_in_as, off_the_page_thread, quiet_page
from tests.support.ingestion import READER, SOURCE, WRITER, run_cycle, world

pytestmark = pytest.mark.browser

FRIENDS = 5000
CAPTION = f"Hollowforge — Red Wyvern, supported for 32 mm\npass: {PASSWORD}"


@pytest.fixture
def wyvern(tmp_path) -> Path:
    (tmp_path / "in").mkdir()
    names = files(tmp_path / "in", ["wyvern/body.stl", "wyvern/wings.stl"], size=3000)
    run(tool("7z"), "a", f"-p{PASSWORD}", "-mhe=on", str(tmp_path / "wyvern.7z"), *names, cwd=tmp_path / "in")
    return tmp_path / "wyvern.7z"


def test_captions_passwords_and_the_send_preview(
    live_server, transactional_db, ingest_world, storage, django_user_model, browser, artifacts, wyvern
):
    friends = {"id": FRIENDS, "title": "Friends", "type": "supergroup", "members": [READER, WRITER]}
    messages = [{"id": 11, "text": CAPTION, "document": {"name": "wyvern.7z", "file": str(wyvern)}}]
    off_the_page_thread(lambda: ingest_world(world(messages=messages, more_chats=[friends])))
    assert off_the_page_thread(run_cycle).ingested == 1
    package = Package.objects.get()
    channel = Channel.objects.get(chat__telegram_id=SOURCE)
    operator = django_user_model.objects.create_user(username="operator", password="s3cret-pass")
    operator.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    django_user_model.objects.create_user(username="viewer", password="s3cret-pass")

    with quiet_page(browser, size="wide") as page:
        shot = Shots(page, artifacts, "captions-operator")
        log_in_as(page, live_server.url, "operator", "s3cret-pass")

        page.goto(f"{live_server.url}/packages/{package.pk}/")
        caption = page.locator("#caption")
        expect(caption).to_contain_text("Hollowforge — Red Wyvern, supported for 32 mm")
        expect(caption).to_contain_text(f"pass: {PASSWORD}")
        expect(caption).to_contain_text("Listed with the password found in the caption.")
        caption.get_by_text("Show password").click()
        expect(caption.locator("code")).to_have_text(PASSWORD)
        expect(page.get_by_label("Caption")).to_have_value(CAPTION)
        shot.at_each_size("package")

        page.get_by_label("Chat or person").select_option(label="Friends")
        preview = page.locator("#send-preview")
        expect(preview).to_contain_text("As it will arrive in Friends")
        expect(preview).to_contain_text("wyvern.7z")
        page.get_by_label("Caption").fill("For the Friends group:\nthe wyvern, printed at 32 mm")
        expect(preview).to_contain_text("the wyvern, printed at 32 mm")
        expect(preview).not_to_contain_text("stashcast:")
        page.locator("#send").scroll_into_view_if_needed()
        shot.at_each_size("send-preview")
        page.get_by_label("Caption").fill("🐉" * 600)
        expect(preview.get_by_role("alert")).to_contain_text("1,200 characters long as Telegram counts them")
        shot.at_each_size("send-too-long")

        page.goto(f"{live_server.url}/channels/{channel.pk}/")
        passwords = page.locator("#channel-passwords")
        passwords.get_by_label("Add a password").fill("Dragon-Key-77")
        passwords.get_by_role("button", name="Add").click()
        expect(page.locator("#channel-passwords")).to_contain_text("D•••7 (13)")
        expect(page.locator("#channel-passwords")).to_contain_text("Password added")
        shot.at_each_size("channel-passwords")

    with quiet_page(browser, size="wide") as page:
        shot = Shots(page, artifacts, "captions-viewer")
        log_in_as(page, live_server.url, "viewer", "s3cret-pass")
        page.goto(f"{live_server.url}/packages/{package.pk}/")
        caption = page.locator("#caption")
        expect(caption).to_contain_text("pass: ••••••")
        expect(caption).to_contain_text("Listed with the password found in the caption.")
        expect(page.get_by_text("Show password")).to_have_count(0)
        assert PASSWORD not in page.content()
        shot.at_each_size("package")
        page.goto(f"{live_server.url}/channels/{channel.pk}/")
        expect(page.locator("#channel-passwords")).to_contain_text(
            "Operators keep 1 password for this channel's archives."
        )
        assert "D•••7" not in page.content()
        shot.at_each_size("channel-passwords")
