"""The Operations page's health strip with `make run`'s processes, one of them restarting, in Chromium, as an
operator and as a viewer, wide and on a phone: it fits and its console is quiet; screenshots in
test-artifacts/processes-*.png."""

import pytest
from playwright.sync_api import expect

from tests.support.browser import SIZES, log_in_as, off_the_page_thread, quiet_page, screenshot, team_add
from tests.support.make_run import crashed, listener_saw, ran

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("role", ["vera", "victor"])
def test_the_strip_shows_a_process_that_keeps_restarting(
    live_server, transactional_db, django_user_model, browser, artifacts, settings, tmp_path, role, size
):
    settings.STACK_PROCESSES_FILE = tmp_path / "supervisor" / "processes.json"
    listener_saw(settings.STACK_PROCESSES_FILE, ran("web") + ran("worker") + ran("beat") + crashed("worker") * 4)
    off_the_page_thread(lambda: team_add(django_user_model))
    with quiet_page(browser, size=size) as page:
        log_in_as(page, live_server.url, role)
        page.goto(f"{live_server.url}/operations/")
        strip = page.locator(".health-row")
        expect(strip).to_contain_text("Processes restarting")
        expect(strip).to_contain_text("worker (4 restarts in 10 min)")
        screenshot(page, artifacts / f"processes-{role}-{size}.png")
