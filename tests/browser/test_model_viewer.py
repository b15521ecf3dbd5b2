"""In Chromium (software WebGL): a package with no photo and no picture shows its model drawn as its preview; a model
file of its tree opens in the 3D viewer, read out of the kept archive, with its size in mm and its triangle count;
as an operator and as a viewer (when viewers may download), at a desktop's and a phone's width, console quiet."""

import re

import pytest
from playwright.sync_api import expect

from tests.support.browser import SIZES, log_in_as, off_the_page_thread, quiet_page, screenshot, team_add
from tests.support.ingestion import run_cycle, world

pytestmark = pytest.mark.browser
LOADED = "img => img.complete ? img.naturalWidth : new Promise(done => img.onload = () => done(img.naturalWidth))"

MESSAGES = [
    {
        "id": 11,
        "document": {
            "name": "ruined-tower.zip",
            "archive": [
                {"path": "ruined-tower/tower.3mf", "model": "dragon"},
                {"path": "ruined-tower/rubble.stl", "model": "tower"},
                {"path": "ruined-tower/readme.txt", "size": 400},
            ],
        },
    },
]


def test_the_drawn_preview_and_the_3d_viewer_for_both_roles_at_both_sizes(
    live_server, transactional_db, ingest_world, storage, django_user_model, webgl_browser, settings, artifacts
):
    settings.DOWNLOAD_LINKS_FOR_VIEWERS = True
    off_the_page_thread(lambda: ingest_world(world(messages=MESSAGES)))
    assert off_the_page_thread(run_cycle).ingested == 1
    team_add(django_user_model)
    shots = artifacts / "model-viewer"
    shots.mkdir(parents=True, exist_ok=True)

    for username in ("vera", "victor"):
        for size in SIZES:
            with quiet_page(webgl_browser, size=size) as page:
                three = []
                page.on("request", lambda request, three=three: "/vendor/three/" in request.url and three.append(1))
                log_in_as(page, live_server.url, username)
                page.goto(f"{live_server.url}/packages/")
                page.get_by_role("link", name="ruined-tower.zip").first.click()
                expect(page.get_by_text("Drawn from the model ruined-tower/tower.3mf")).to_be_visible()
                image = page.get_by_role("img", name="Preview of ruined-tower.zip")
                assert image.evaluate(LOADED) == 480  # the drawn preview really loaded

                page.locator("#model-viewer[data-ready]").wait_for(state="attached")  # its module is loaded
                assert not three, "three.js waits for the first View in 3D"
                page.locator('.file-view[data-model-name="ruined-tower/tower.3mf"]').click()
                viewer = page.locator("#model-viewer")
                expect(viewer).to_be_visible()
                expect(viewer.locator("[data-viewer-facts]")).to_have_text(
                    re.compile(r"^[\d.]+ × [\d.]+ × [\d.]+ mm · [\d,]+ triangles$")
                )
                expect(viewer.locator("canvas")).to_be_visible()
                assert three, "three.js came with the click"
                viewer.get_by_role("button", name="Fit").click()
                screenshot(page, shots / f"package-viewer-{username}-{SIZES[size]['width']}.png")
