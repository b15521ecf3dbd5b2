"""Browser tests: logins, screenshots numbered by step, ORM work off the page's thread, and a real Celery worker
for the journeys."""

import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from django.contrib.auth.models import Group
from django.db import connections
from playwright.sync_api import expect

from core.roles import OPERATORS_GROUP
from tests.support.processes import purge_queues, start_celery_worker, stop_workers

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
        # Scrolled up first, or the sticky top bar is drawn where the page was scrolled to.
        self.page.evaluate("window.scrollTo(0, 0)")
        self.page.screenshot(path=self.folder / f"{self.journey}-{self.taken:02d}-{step}.png", full_page=True)


def log_in_as_superuser(page, url: str, django_user_model, shot: Shots) -> None:
    django_user_model.objects.create_superuser(username="operator", password="s3cret-pass")
    page.goto(f"{url}/")
    expect(page.get_by_label("Username")).to_be_visible()  # the console sends strangers to its login page
    shot("login")
    page.get_by_label("Username").fill("operator")
    page.get_by_label("Password").fill("s3cret-pass")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()


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
    page.goto(f"{url}/login/")
    page.get_by_label("Username").fill("operator")
    page.get_by_label("Password").fill("s3cret-pass")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()


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
    page.goto(f"{url}/login/")
    page.get_by_label("Username").fill("operator")
    page.get_by_label("Password").fill("s3cret-pass")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()
