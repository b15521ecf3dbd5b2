"""Playwright (sync API) driving Debian's Chromium; no browser download."""

from pathlib import Path

import pytest

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


@pytest.fixture
def browser(monkeypatch):
    if not CHROMIUM.exists():
        pytest.skip("Browser tests need Debian's Chromium at /usr/bin/chromium (apt-get install chromium).")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop running in this thread; Django would otherwise refuse
    # the ORM calls the test makes around it.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


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
