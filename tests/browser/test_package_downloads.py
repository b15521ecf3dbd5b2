"""Download links in Chromium, at 1440 and 390 px: an operator makes the links of a multi-volume package and
downloads a volume (its bytes are the kept ones); a viewer sees that links are for operators, then, once allowed
(DOWNLOAD_LINKS_FOR_VIEWERS), makes and uses them too. The console stays quiet throughout."""

import os

import pytest
from playwright.sync_api import expect

from tests.support.browser import Shots, log_in_as, log_in_as_operator, quiet_page
from tests.support.factories import package_with_raw_files

pytestmark = pytest.mark.browser

VOLUMES = {"wyvern.7z.001": os.urandom(300_000), "wyvern.7z.002": os.urandom(120_000)}


def _download(page, name: str) -> bytes:
    with page.expect_download() as started:
        page.get_by_role("link", name=name).click()
    return open(started.value.path(), "rb").read()


def test_download_links_as_operator_and_viewer(
    live_server, transactional_db, settings, tmp_path, django_user_model, browser, artifacts
):
    settings.MEDIA_ROOT = tmp_path / "media"
    package = package_with_raw_files(tmp_path, VOLUMES, name="wyvern.7z")
    django_user_model.objects.create_user(username="viewer", password="s3cret-pass")

    with quiet_page(browser, size="wide", accept_downloads=True) as page:
        shot = Shots(page, artifacts, "downloads-operator")
        log_in_as_operator(page, live_server.url, django_user_model)
        page.goto(f"{live_server.url}/packages/{package.pk}/")
        downloads = page.locator("#downloads")
        expect(downloads).to_contain_text("one per volume")
        shot.at_each_size("before")
        downloads.get_by_role("link", name="Make download links").click()
        expect(downloads).to_contain_text("Working until")
        expect(downloads.get_by_role("link", name="wyvern.7z.001")).to_be_visible()
        shot.at_each_size("links")
        assert _download(page, "wyvern.7z.002") == VOLUMES["wyvern.7z.002"]

    with quiet_page(browser, size="wide", accept_downloads=True) as page:
        shot = Shots(page, artifacts, "downloads-viewer")
        log_in_as(page, live_server.url, "viewer", "s3cret-pass")
        page.goto(f"{live_server.url}/packages/{package.pk}/")
        downloads = page.locator("#downloads")
        expect(downloads).to_contain_text("Download links are for operators")
        expect(downloads.get_by_role("link", name="Make download links")).to_have_count(0)
        shot.at_each_size("not-allowed")

        settings.DOWNLOAD_LINKS_FOR_VIEWERS = True
        page.reload()
        page.locator("#downloads").get_by_role("link", name="Make download links").click()
        expect(page.locator("#downloads")).to_contain_text("Working until")
        shot.at_each_size("allowed")
        assert _download(page, "wyvern.7z.001") == VOLUMES["wyvern.7z.001"]
