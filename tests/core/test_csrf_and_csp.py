"""Every POST needs the CSRF token, HTMX ones included; every response carries the Content-Security-Policy."""

import re
from pathlib import Path

import pytest
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, reverse

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}
SAMPLE_VALUES = {"int": "1", "str": "x", "slug": "x", "path": "x", "uuid": "00000000-0000-0000-0000-000000000001"}


def policy(response) -> dict[str, str]:
    header = response.get("Content-Security-Policy", "")
    return dict(directive.strip().split(" ", 1) for directive in header.split(";") if directive.strip())


def sample_for_group(match: re.Match) -> str:
    """A value for a regex group: its first alternative (`auth|accounts`), else an id."""
    body = match.group(1)
    return body.split("|")[0] if re.fullmatch(r"[\w|]+", body) else "1"


def every_url() -> list[str]:
    """One concrete path per URL pattern of the project, placeholders filled with sample values."""
    found = []

    def walk(patterns, prefix: str):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, prefix + str(pattern.pattern))
                continue
            assert isinstance(pattern, URLPattern)
            route = prefix + str(pattern.pattern)
            if "(?P<format>" in route or "<drf_format_suffix" in route:
                continue  # the same views with a .json suffix
            route = re.sub(r"\(\?P<\w+>([^)]*)\)", sample_for_group, route)
            route = re.sub(r"<(?:(\w+):)?\w+>", lambda match: SAMPLE_VALUES[match.group(1) or "str"], route)
            found.append("/" + route.replace("^", "").replace("$", "").replace("\\", ""))

    walk(get_resolver().url_patterns, "")
    return sorted(set(found))


@pytest.mark.large  # bench-sized: a sweep of the whole surface; `make test` runs it, `make test-fast` leaves it out
def test_every_post_without_the_csrf_token_is_refused_htmx_or_not(admin_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    urls = every_url()
    assert len(urls) > 20 and "/accounts/add/" in urls and "/api/accounts/1/sign-in/" in urls

    allowed = {}
    for url in urls:
        for headers in ({"HTTP_HX_REQUEST": "true"}, {}):
            response = client.post(url, {"phone": "+15550000001"}, **headers)
            if response.status_code != 403:
                allowed[(url, bool(headers))] = response.status_code
    assert not allowed, f"POSTs accepted without a CSRF token: {allowed}"


def test_an_htmx_post_with_the_token_from_the_page_goes_through(admin_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    page = client.get(reverse("accounts:list")).content.decode()
    token = re.search(r'hx-headers=\'\{"X-CSRFToken": "([^"]+)"\}\'', page).group(1)

    refused = client.post(reverse("accounts:add"), {"phone": "12"}, HTTP_HX_REQUEST="true")
    accepted = client.post(reverse("accounts:add"), {"phone": "12"}, HTTP_HX_REQUEST="true", HTTP_X_CSRFTOKEN=token)

    assert refused.status_code == 403
    assert accepted.status_code == 200  # the dialog again, with the phone number's error
    assert "international format" in accepted.content.decode()


@pytest.mark.parametrize(
    ("url", "logged_in"),
    [
        ("/login/", False),
        ("/", True),
        ("/accounts/", True),
        ("/api/accounts/", True),
        ("/api/schema/", True),
        ("/api/docs/", True),
        ("/admin/login/", False),
        ("/no-such-page/", True),
        ("/api/accounts/", False),  # 401/403 JSON
    ],
)
def test_every_response_carries_the_policy(client, admin_user, url, logged_in):
    if logged_in:
        client.force_login(admin_user)
    assert policy(client.get(url)) == POLICY


def test_a_csrf_failure_carries_the_policy_too(admin_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(admin_user)
    assert policy(client.post(reverse("accounts:add"))) == POLICY


def test_the_swagger_ui_loads_its_script_and_assets_from_this_origin(admin_client):
    page = admin_client.get("/api/docs/").content.decode()
    scripts = re.findall(r"<script([^>]*)>", page)
    assert scripts and all('src="/' in attributes for attributes in scripts), scripts
    assert "cdn" not in page.lower()
    script = admin_client.get("/api/docs/?script=")
    assert script.status_code == 200 and "SwaggerUIBundle" in script.content.decode()


def test_htmx_is_configured_for_the_policy(admin_client):
    page = admin_client.get("/").content.decode()
    assert re.search(r'<script src="/static/django_htmx/htmx-2\.min\.js"', page)
    assert '"includeIndicatorStyles": false, "allowEval": false, "allowScriptTags": false' in page


INLINE = {
    "inline script": re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*type=\"application/json\")[^>]*>", re.I),
    "style element": re.compile(r"<style[\s>]", re.I),
    "style attribute": re.compile(r"\sstyle=", re.I),
    "event handler attribute": re.compile(r"\son[a-z]+\s*=", re.I),
    "hx-on attribute": re.compile(r"\shx-on", re.I),
    "javascript: URL": re.compile(r"javascript:", re.I),
    "hx-trigger filter (needs eval)": re.compile(r"hx-trigger=\"[^\"]*\[", re.I),
}


def test_templates_have_no_inline_script_or_style_the_policy_would_block():
    found = set()
    for template in TEMPLATES.rglob("*.html"):
        text = template.read_text()
        for kind, pattern in INLINE.items():
            if pattern.search(text):
                found.add((str(template.relative_to(TEMPLATES)), kind))
    # None known: the browser walk of every page (tests/browser/test_console_quiet.py) hears no CSP violation.
    assert not found, f"inline code the Content-Security-Policy blocks: {sorted(found)}"
