"""The People page and the page an invite link opens, in Chromium, as an operator and as a viewer, wide and on a
phone: they fit and the console stays quiet; screenshots in test-artifacts/people-*.png and invite-*.png."""

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from core import people
from core.roles import OPERATORS_GROUP
from tests.support.browser import off_the_page_thread, top

pytestmark = pytest.mark.browser

SIZES = {"wide": {"width": 1440, "height": 900}, "phone": {"width": 390, "height": 844}}
PASSWORD = "pw-long-enough"
CHOSEN = "a-long-chosen-passphrase"
FITS = "document.documentElement.scrollWidth <= document.documentElement.clientWidth + 1"


def _team(django_user_model) -> str:
    """Vera (operator), Victor (viewer), and a link Vera made that waits to be used: its secret."""
    vera = django_user_model.objects.create_user(username="vera", password=PASSWORD)
    vera.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    django_user_model.objects.create_user(username="victor", password=PASSWORD)
    return people.invite_create(role="viewer", username="wendy", created_by=vera)[1]


def _watched(context):
    page = context.new_page()
    problems = []
    # Refusals (403, 410) are pages a person is meant to see: the browser reports their status itself, nothing
    # else may be said, and nothing else may fail.
    expected = ("status of 403", "status of 410")
    page.on(
        "console",
        lambda m: m.type in ("error", "warning") and not any(e in m.text for e in expected) and problems.append(m.text),
    )
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("response", lambda r: r.status >= 400 and r.status not in (403, 410) and problems.append(r.url))
    return page, problems


def _log_in(page, url: str, username: str) -> None:
    page.goto(f"{url}/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Dashboard")).to_be_visible()


def _shot(page, path) -> None:
    assert page.evaluate(FITS), f"{page.url} is wider than the window"
    top(page)
    page.screenshot(path=path, full_page=True)


@pytest.mark.parametrize("size", SIZES)
def test_an_operator_invites_someone_who_joins(
    live_server, transactional_db, django_user_model, browser, artifacts, size
):
    token = off_the_page_thread(lambda: _team(django_user_model))
    context = browser.new_context(viewport=SIZES[size])
    context.set_default_timeout(10_000)
    page, problems = _watched(context)
    _log_in(page, live_server.url, "vera")
    page.locator(".team-menu > summary").click()
    page.get_by_role("link", name="People").click()
    expect(page.get_by_role("heading", name="People", exact=True)).to_be_visible()
    expect(page.locator(".people-table")).to_contain_text("victor")
    expect(page.get_by_role("heading", name="Links not used yet")).to_be_visible()
    expect(page.get_by_text("wendy", exact=True)).to_be_visible()
    _shot(page, artifacts / f"people-operator-{size}.png")

    page.get_by_label("Role", exact=True).select_option("operator")
    page.get_by_role("button", name="Make an invite link").click()
    secret = page.get_by_label("The link")
    expect(secret).to_be_visible()
    link = secret.input_value()
    assert link.startswith(f"{live_server.url}/invite/")
    _shot(page, artifacts / f"people-operator-{size}-link-shown.png")

    stranger = browser.new_context(viewport=SIZES[size])
    joining, joining_problems = _watched(stranger)
    joining.goto(link)
    expect(joining.get_by_role("heading", name="Join as operator")).to_be_visible()
    _shot(joining, artifacts / f"invite-stranger-{size}.png")
    joining.get_by_label("Login name").fill("xavier")
    joining.get_by_label("Password", exact=True).fill(CHOSEN)
    joining.get_by_label("Password again").fill(CHOSEN)
    joining.get_by_role("button", name="Create my login").click()
    expect(joining.get_by_text("Welcome, xavier. Your password is set.")).to_be_visible()
    joining.locator(".team-menu > summary").click()
    expect(joining.get_by_role("link", name="People")).to_be_visible()

    joining.goto(link)
    expect(joining.get_by_role("heading", name="This link cannot be used")).to_be_visible()
    expect(joining.get_by_text("This link was already used; it works once.")).to_be_visible()
    _shot(joining, artifacts / f"invite-used-{size}.png")
    stranger.close()

    page.goto(f"{live_server.url}/invite/{token}/")
    expect(page.get_by_role("heading", name="Join as viewer")).to_be_visible()
    expect(page.get_by_text("Your login name is wendy")).to_be_visible()
    _shot(page, artifacts / f"invite-operator-{size}.png")
    context.close()
    assert not problems and not joining_problems, problems + joining_problems


@pytest.mark.parametrize("size", SIZES)
def test_a_viewer_has_no_people_page_and_may_still_open_a_link(
    live_server, transactional_db, django_user_model, browser, artifacts, size
):
    token = off_the_page_thread(lambda: _team(django_user_model))
    context = browser.new_context(viewport=SIZES[size])
    context.set_default_timeout(10_000)
    page, problems = _watched(context)
    _log_in(page, live_server.url, "victor")
    expect(page.get_by_role("link", name="People")).to_have_count(0)
    page.goto(f"{live_server.url}/people/")
    expect(page.get_by_text("People is for operators; ask one to add or change a login.")).to_be_visible()
    _shot(page, artifacts / f"people-viewer-{size}.png")

    page.goto(f"{live_server.url}/invite/{token}/")
    expect(page.get_by_role("heading", name="Join as viewer")).to_be_visible()
    _shot(page, artifacts / f"invite-viewer-{size}.png")
    context.close()
    assert not problems, problems
