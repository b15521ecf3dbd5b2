"""Playwright (sync API) driving Debian's Chromium; no browser download."""

from asyncio import events
from pathlib import Path

import pytest
from playwright.sync_api import expect

# An assertion waits as long as an action may (the contexts' 10 s): two cores under a parallel run answer late.
expect.set_options(timeout=10_000)

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


class _Chromium:
    """One Playwright driver and one Chromium for the whole test process, launched by its first browser test:
    starting both costs seconds, and each test still works in browser contexts of its own.

    Playwright's sync API keeps its event loop marked as running in this thread. Between browser tests the mark
    is taken away (the loop itself waits, untouched), or every other test of the process would run inside "an
    event loop": Django would refuse its ORM calls and asyncio.run would refuse to start."""

    def __init__(self):
        self.playwright = self.browser = self.loop = None

    def lend(self):
        events._set_running_loop(self.loop)
        if self.browser is None or not self.browser.is_connected():
            if self.playwright is None:
                from playwright.sync_api import sync_playwright

                self.playwright = sync_playwright().start()
                self.loop = events._get_running_loop()
            self.browser = self.playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        return self.browser

    def take_back(self) -> None:
        if self.browser is not None and self.browser.is_connected():
            for context in self.browser.contexts:
                context.close()  # what a test left open goes with it
        events._set_running_loop(None)

    def close(self) -> None:
        if self.playwright is not None:
            events._set_running_loop(self.loop)
            if self.browser is not None and self.browser.is_connected():
                self.browser.close()
            self.playwright.stop()


@pytest.fixture(scope="session")
def _chromium():
    chromium = _Chromium()
    yield chromium
    chromium.close()


@pytest.fixture
def browser(_chromium, monkeypatch):
    if not CHROMIUM.exists():
        pytest.skip("Browser tests need Debian's Chromium at /usr/bin/chromium (apt-get install chromium).")
    # The loop is marked running while the test drives the browser; Django would otherwise refuse the ORM calls
    # the test makes around it.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    try:
        yield _chromium.lend()
    finally:
        _chromium.take_back()


@pytest.fixture
def webgl_browser(monkeypatch):
    """Chromium with its software WebGL (SwiftShader): the 3D viewer draws as on a machine without a GPU."""
    if not CHROMIUM.exists():
        pytest.skip("Browser tests need Debian's Chromium at /usr/bin/chromium (apt-get install chromium).")
    from playwright.sync_api import sync_playwright

    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    args = [arg for arg in CHROMIUM_ARGS if arg != "--disable-gpu"] + [
        "--use-angle=swiftshader",
        "--enable-unsafe-swiftshader",
    ]
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=args)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(10_000)
    yield context.new_page()
    context.close()


@pytest.fixture
def artifacts() -> Path:
    """Screenshots land in test-artifacts/ (git-ignored) for a person to look at."""
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
