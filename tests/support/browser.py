"""Browser tests: a team of two and their logins, pages at a phone's and a desktop's width whose console must stay
quiet, screenshots (numbered by step for the journeys), ORM work off the page's thread, and a real Celery worker
for the journeys."""

import re
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from django.contrib.auth.models import Group
from django.db import connections
from playwright.sync_api import expect

from core.roles import OPERATORS_GROUP
from tests.support.processes import purge_queues, start_celery_worker, stop_workers

# The widths every page is looked at: a desktop's and a phone's.
SIZES = {"wide": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
TEAM_PASSWORD = "pw-long-enough"
FITS = "document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1"

# A worker has started when the ingestion cycle it queues for itself at startup is over: from then on, the
# only runs are the ones the journey asks for.
STARTUP_DONE = re.compile(r"Task ingestion\.tasks\.ingestion_cycle_start\[[^\]]+\] succeeded")


class Shots:
    """Full-page screenshots named `<journey>-<NN>-<step>.png`, numbered in the order they are taken."""

    def __init__(self, page, folder: Path, journey: str):
        self.page, self.folder, self.journey = page, folder, journey
        self.taken = 0

    def __call__(self, step: str) -> None:
        self.taken += 1
        top(self.page)
        self.page.screenshot(path=self.folder / f"{self.journey}-{self.taken:02d}-{step}.png", full_page=True)

    def at_each_size(self, step: str) -> None:
        """The page at each of SIZES (its width in the name), then wide again."""
        for size in SIZES.values():
            self.page.set_viewport_size(size)
            self(f"{step}-{size['width']}")
        self.page.set_viewport_size(SIZES["wide"])


def team_add(django_user_model) -> None:
    """Vera, an operator, and Victor, a viewer, both with TEAM_PASSWORD."""
    vera = django_user_model.objects.create_user(username="vera", password=TEAM_PASSWORD)
    vera.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    django_user_model.objects.create_user(username="victor", password=TEAM_PASSWORD)


@contextmanager
def quiet_page(browser, *, size: str, refusals: tuple[int, ...] = (), **options) -> Iterator:
    """A page at one of SIZES, in a browser context of its own. On the way out, anything its console said as an
    error or a warning, a script error, or an answer of 400 or more fails the test; `refusals` are statuses of
    pages a person is meant to see (the browser reports those itself)."""
    context = browser.new_context(viewport=SIZES[size], **options)
    context.set_default_timeout(10_000)
    page = context.new_page()
    problems = []
    expected = tuple(f"status of {status}" for status in refusals)
    page.on(
        "console",
        lambda m: m.type in ("error", "warning") and not any(e in m.text for e in expected) and problems.append(m.text),
    )
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on(
        "response", lambda r: r.status >= 400 and r.status not in refusals and problems.append(f"{r.status} {r.url}")
    )
    try:
        yield page
    finally:
        context.close()
    assert not problems, problems


def log_in_as(page, url: str, username: str, password: str = TEAM_PASSWORD) -> None:
    page.goto(f"{url}/login/")
    _login_form_send(page, username, password)


def _login_form_send(page, username: str, password: str) -> None:
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()


def screenshot(page, path: Path) -> None:
    """The whole page, once it is checked to fit the window's width."""
    assert page.evaluate(FITS), f"{page.url} is wider than the window"
    top(page)
    page.screenshot(path=path, full_page=True)


def log_in_as_superuser(page, url: str, django_user_model, shot: Shots) -> None:
    django_user_model.objects.create_superuser(username="operator", password="s3cret-pass")
    page.goto(f"{url}/")
    expect(page.get_by_label("Username")).to_be_visible()  # the console sends strangers to its login page
    shot("login")
    _login_form_send(page, "operator", "s3cret-pass")


class Worker:
    def __init__(self, process: subprocess.Popen, log: Path):
        self.process, self.log = process, log

    def wait_until_started(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if STARTUP_DONE.search(self.log.read_text()):
                return
            if self.process.poll() is not None:
                raise AssertionError(f"The Celery worker exited ({self.process.returncode}):\n{self.tail()}")
            time.sleep(0.2)
        raise AssertionError(f"The Celery worker did not finish starting in {timeout:.0f} s:\n{self.tail()}")

    def tail(self) -> str:
        return self.log.read_text()[-4000:]


@contextmanager
def celery_worker(tmp_path: Path, *, queues: str = "ingest,default,fanout"):
    """One real worker process on the live test database and the test Redis database, stopped on the way out.

    The sandbox world, media and staging folders are this test's (settings.SANDBOX_PATH, MEDIA_ROOT and
    INGEST_STAGING_DIR must be set before), so the worker and the pages see the same Telegram and files.
    """
    purge_queues()  # nothing left by an earlier test reaches this worker
    process = start_celery_worker(tmp_path, queues=queues, name="journey")
    try:
        yield Worker(process, tmp_path / "journey.log")
    finally:
        stop_workers([process])


def top(page) -> None:
    """Scroll up before a full-page screenshot, or the sticky top bar is drawn where the page was scrolled to."""
    page.evaluate("window.scrollTo(0, 0)")


def log_in_as_operator(page, url: str, django_user_model) -> None:
    user = django_user_model.objects.create_user(username="operator", password="s3cret-pass")
    user.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    log_in_as(page, url, "operator", "s3cret-pass")


def off_the_page_thread(function):
    """Playwright keeps an event loop running in the test's thread, and the sandbox gateway needs asyncio.run."""

    def call():
        try:
            return function()
        finally:
            connections.close_all()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(call).result()


def log_in(page, url: str, django_user_model) -> None:
    django_user_model.objects.create_superuser(username="operator", password="s3cret-pass")
    log_in_as(page, url, "operator", "s3cret-pass")
