"""Every URL of the project, walked as nobody, as a viewer and as an operator; every change (each write operation
of the OpenAPI schema, each page's POST) sent by a read token and by a viewer."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import URLPattern, URLResolver, get_resolver
from drf_spectacular.generators import SchemaGenerator

from accounts.models import TelegramAccount
from core.models import ApiToken, AuditEntry, Invite, Notification
from core.roles import OPERATORS_GROUP, VIEW_DECIDES, VIEWER_MESSAGE
from core.tokens import READ_ONLY_MESSAGE, VIEWER_TOKEN_MESSAGE, api_token_create
from ingestion.models import CatalogAudit, Channel, IngestionRun, SkippedPackage, TopicProgress
from packages.models import BotPerson, ChannelPassword, Collection, Package, PackageFile, PackagePreview, PackageSend
from packages.services.downloads import VIEWERS_REFUSED
from reminders.models import Audience, MediaFile, Reminder, ReminderRun
from tests.support.ingestion import run_cycle, world

pytestmark = pytest.mark.django_db

# Open to everyone on purpose: a download link's signature stands for the person who made it, an invite's
# secret for the operator who sent it.
PUBLIC = {"/login/", "/healthz", "/api/auth/token/", "/packages/download/x/x", "/packages/file/x/x", "/invite/x/"}
# A viewer may always end (or start) a session.
SESSION = {"/login/", "/logout/"}
# A viewer manages their own (read) tokens: tests/core/test_api_tokens.py.
OWN_TOKENS = {"/tokens/", "/tokens/new/", "/tokens/{pk}/revoke/", "/api/tokens/", "/api/tokens/{pk}/"}
OWN_TOKENS.add("/api/tokens/{pk}/revoke/")
# For operators only, even to look: Flower (core/flower.py; no Flower runs here, so operators get a 502 that says
# so) and the metrics (or their own token).
OPERATORS_ONLY = {
    "/flower/{path}",
    "/flower/tasks/datatable",
    "/metrics",
    "/api/metrics/",
    "/api/channels/{pk}/passwords/",
    "/packages/{pk}/download-links/",  # unless DOWNLOAD_LINKS_FOR_VIEWERS
    "/packages/{pk}/files/{file_pk}/get",  # the same rule
}


def walk(patterns=None, prefix=""):
    for entry in patterns if patterns is not None else get_resolver().url_patterns:
        if isinstance(entry, URLResolver):
            yield from walk(entry.url_patterns, prefix + str(entry.pattern))
        elif isinstance(entry, URLPattern):
            yield prefix + str(entry.pattern)


def concrete(pattern: str) -> str | None:
    """A URL for a pattern, every id a `{name}` that `row_ids` fills in; None for format-suffix duplicates."""
    if "format" in pattern:
        return None
    url = re.sub(r"\(\?P<(\w+)>[^)]*\)", r"{\1}", pattern)
    url = re.sub(r"<(?:int:)?(\w+)>", r"{\1}", url)
    url = re.sub(r"<(?:str|slug|path|uuid):\w+>", "x", url)
    url = url.replace("^", "").replace("$", "").replace("\\", "")
    return "/" + url.lstrip("/")


URLS = sorted({url for url in map(concrete, walk()) if url and not url.startswith("/admin/")})
# People: who may log in and as what (core/people.py), every address of it.
OPERATORS_ONLY |= {url for url in URLS if url.startswith(("/people/", "/api/people/", "/api/invites/"))}


# What a URL's {pk} stands for, by how the URL starts (the longest start that fits): the first row of that kind.
PK_KINDS = {
    "/accounts/": TelegramAccount,
    "/activity/runs/": ReminderRun,
    "/attention/reminder-runs/": ReminderRun,
    "/audiences/": Audience,
    "/audit/": AuditEntry,
    "/catalog-audits/": CatalogAudit,
    "/catalog/audits/": CatalogAudit,
    "/channels/": Channel,
    "/collections/": Collection,
    "/ingestion-runs/": IngestionRun,
    "/ingestion/runs/": IngestionRun,
    "/invites/": Invite,
    "/media/": MediaFile,
    "/notifications/": Notification,
    "/package-sends/": PackageSend,
    "/packages/": Package,
    "/packages/collections/": Collection,
    "/packages/sends/": PackageSend,
    "/people/": get_user_model(),
    "/people/invites/": Invite,
    "/reminder-runs/": ReminderRun,
    "/reminders/": Reminder,
    "/reminders/audiences/": Audience,
    "/skipped-packages/": SkippedPackage,
    "/skipped/": SkippedPackage,
    "/tokens/": ApiToken,
    "/topics/": TopicProgress,
}
# The other ids, by their name in the URL.
NAMED_KINDS = {
    "account_pk": TelegramAccount,
    "file_pk": PackageFile,
    "file_id": PackageFile,
    "password_id": ChannelPassword,
    "password_pk": ChannelPassword,
    "preview_pk": PackagePreview,
    "topic_pk": TopicProgress,
}
# An id no row has: a kind the walk's rows do not include answers "not found" for anyone.
NO_ROW = 0


def _first_id(model, field: str = "pk") -> int:
    return model.objects.order_by("pk").values_list(field, flat=True).first() or NO_ROW


def row_ids(template: str) -> dict[str, int | str]:
    """The ids of the rows a URL of the walk is about, whatever ids the database gave them."""
    ids = {}
    for name in re.findall(r"{(\w+)}", template):
        if name == "pk":
            path = template.removeprefix("/api")
            start = max((start for start in PK_KINDS if path.startswith(start)), key=len, default=None)
            assert start is not None, f"{template}: which kind is its id? Add it to PK_KINDS."
            ids[name] = _first_id(PK_KINDS[start])
        elif name == "user_id":
            ids[name] = _first_id(BotPerson, "user_id")
        elif name == "path":
            ids[name] = "1"  # any of Flower's pages
        else:
            assert name in NAMED_KINDS, f"{template}: which kind is {{{name}}}? Add it to NAMED_KINDS."
            ids[name] = _first_id(NAMED_KINDS[name])
    return ids


@pytest.fixture
def people(ingest_world, storage):
    messages = [{"id": 7, "document": {"name": "a.zip", "archive": [{"path": "a.stl", "size": 5}]}}]
    ingest_world(world(messages=messages))
    run_cycle()  # an account, a channel, a run, a package: rows for the walk's ids
    users = get_user_model()
    viewer = users.objects.create_user("viewer", password="x")
    operator = users.objects.create_user("operator", password="x")
    operator.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    clients = {}
    for name, user in (("viewer", viewer), ("operator", operator)):
        clients[name] = Client()
        clients[name].force_login(user)
    return clients


def test_the_walk_covers_the_whole_project():
    assert len(URLS) > 60
    for expected in ("/accounts/", "/channels/", "/packages/", "/skipped/", "/api/accounts/", "/api/packages/"):
        assert expected in URLS


@pytest.mark.parametrize("template", URLS)
def test_nobody_gets_in_without_logging_in(client, template):
    if template in PUBLIC or template == "/logout/":
        return
    url = template.format(**row_ids(template))
    for method in ("get", "post"):
        response = getattr(client, method)(url)
        if (url.startswith("/api/") and url != "/api/docs/") or url == "/metrics":
            # 405: a GET-only endpoint refuses the method before anything else
            assert response.status_code in {401, 403, 405}, f"{method.upper()} {url}: {response.status_code}"
        else:  # pages, the API docs page among them, send a person to log in
            assert response.status_code == 302, f"{method.upper()} {url}: {response.status_code}"
            assert response["Location"].startswith("/login/"), f"{method.upper()} {url} → {response['Location']}"


def _log_in_again(clients) -> None:
    users = get_user_model().objects
    users.filter(username__in=clients).update(is_active=True)
    for name, client in clients.items():
        client.force_login(users.get(username=name))


@pytest.mark.large  # bench-sized: a sweep of the whole surface; `make test` runs it, `make test-fast` leaves it out
def test_every_url_as_viewer_and_operator(people):
    problems = []
    for template in URLS:
        if template in PUBLIC:
            continue  # the same for everyone (/healthz may say 503 when beat is not running)
        url = template.format(**row_ids(template))
        viewer_get = people["viewer"].get(url)
        if template in OPERATORS_ONLY:
            if viewer_get.status_code != 403:
                problems.append(f"viewer GET {url}: {viewer_get.status_code}, not 403")
        elif viewer_get.status_code >= 500 or viewer_get.status_code == 403:
            problems.append(f"viewer GET {url}: {viewer_get.status_code}")
        if template in SESSION or template in OWN_TOKENS:
            continue  # a viewer's changes are refused by test_every_change_is_refused_before_it_is_read
        operator_post = people["operator"].post(url)
        server_error = operator_post.status_code >= 500 and template not in OPERATORS_ONLY
        if server_error or VIEWER_MESSAGE in operator_post.content.decode():
            problems.append(f"operator POST {url}: {operator_post.status_code}")
        if url.startswith(("/people/", "/api/people/")):
            _log_in_again(people)  # the first login is the walk's own viewer, just deactivated or given a new password
    assert not problems, "\n".join(problems)


# Every write operation of the API, as its schema lists them (drf-spectacular): method and path.
SCHEMA = SchemaGenerator().get_schema(request=None, public=True)
API_CHANGES = sorted(
    (method.upper(), path)
    for path, operations in SCHEMA["paths"].items()
    for method in operations
    if method in {"post", "put", "patch", "delete"} and path != "/api/auth/token/"  # logging in: anyone
)
# Every page, by its URL conf: any of them might take a POST. The API's own URLs are in its schema; the rest of
# /api/ (the schema, its docs page, the root) is third-party and read-only.
PAGES = [url for url in URLS if not url.startswith("/api/") and url not in PUBLIC | SESSION]
NO_SUCH_ID = 987654
# A refused request still leaves its audit entry, and a token its last use (at most once a minute).
WRITES_ALLOWED = {"core_auditentry", "core_auditchange", "core_apitoken", "django_session"}
WRITE_SQL = re.compile(r'^\s*(?:INSERT INTO|UPDATE|DELETE FROM)\s+"(\w+)"', re.I)


def _no_such_row(path: str) -> str:
    """The path with every id one no row has: a refusal must come before any lookup."""
    return re.sub(r"{\w+}", str(NO_SUCH_ID), path)


@pytest.fixture
def who(request, django_user_model):
    """A client: an operator's read token, a viewer's session or a viewer's (read) token."""
    operator = django_user_model.objects.create_user("operator", password="x")
    operator.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    viewer = django_user_model.objects.create_user("viewer", password="x")
    if request.param == "viewer session":
        client = Client()
        client.force_login(viewer)
        return client
    owner = operator if request.param == "operator's read token" else viewer
    return Client(HTTP_AUTHORIZATION=f"Token {api_token_create(owner=owner, name='look', scope='read')[1]}")


def _changed_tables(client, method: str, url: str):
    with CaptureQueriesContext(connection) as queries:
        # Not JSON at all: an answer about the body would mean it was read before the refusal.
        response = getattr(client, method.lower())(url, data="{not json", content_type="application/json")
    written = {match[1] for query in queries.captured_queries if (match := WRITE_SQL.match(query["sql"]))}
    return response, written - WRITES_ALLOWED


@pytest.mark.parametrize(
    "who", ["operator's read token", "viewer session", "viewer's token"], indirect=True, ids=lambda name: name
)
def test_every_change_is_refused_before_it_is_read(who, request):
    identity = request.node.callspec.params["who"]
    assert len(API_CHANGES) > 60 and len(PAGES) > 60, "the walk reaches the whole API and every page"
    problems = []
    for method, path in API_CHANGES:
        if identity == "viewer session" and path.startswith("/api/tokens/"):
            continue  # a viewer manages their own read tokens: tests/core/test_api_tokens.py
        url = _no_such_row(path)
        response, changed = _changed_tables(who, method, url)
        message = response.json().get("message", "") if response.headers["Content-Type"] == "application/json" else ""
        refusals = {READ_ONLY_MESSAGE, VIEWER_MESSAGE, VIEWER_TOKEN_MESSAGE}
        if VIEW_DECIDES.match(url):  # the view refuses a viewer itself, unless DOWNLOAD_LINKS_FOR_VIEWERS
            refusals.add(VIEWERS_REFUSED)
        if response.status_code != 403 or message not in refusals:
            problems.append(f"{method} {url}: {response.status_code} {response.content[:120]!r}")
        if changed:
            problems.append(f"{method} {url} wrote to {sorted(changed)}")
    for template in PAGES:
        if identity == "viewer session" and template in OWN_TOKENS:
            continue
        url = template.format(**dict.fromkeys(re.findall(r"{(\w+)}", template), NO_SUCH_ID))
        response, changed = _changed_tables(who, "POST", url)
        if identity == "viewer session":
            refused = response.status_code == 403 and VIEWER_MESSAGE in response.content.decode()
        else:  # a token is no login for a page: it is sent to log in (/metrics, read-only, says 405)
            refused = response.status_code == 405 or response.get("Location", "").startswith("/login/")
        if not refused:
            problems.append(f"POST {url}: {response.status_code}")
        if changed:
            problems.append(f"POST {url} wrote to {sorted(changed)}")
    assert not problems, "\n".join(problems)


def test_a_viewer_token_reads_but_does_not_write(people):
    _, secret = api_token_create(owner=get_user_model().objects.get(username="viewer"), name="look", scope="read")
    api = Client(HTTP_AUTHORIZATION=f"Token {secret}")

    assert api.get("/api/packages/").status_code == 200
    refused = api.post("/api/ingestion/trigger/", {}, content_type="application/json")
    assert refused.status_code == 403 and refused.json()["message"] == VIEWER_MESSAGE


def test_pages_tell_a_viewer_and_hide_the_controls(people):
    page = people["viewer"].get("/skipped/").content.decode()
    assert "signed in as a viewer" in page and 'class="is-viewer"' in page
    assert "signed in as a viewer" not in people["operator"].get("/skipped/").content.decode()


def test_create_login_makes_operators_and_viewers(capsys):
    call_command("create_login", "alice", "--role", "operator")
    call_command("create_login", "bob", "--role", "viewer")
    users = get_user_model().objects
    assert users.get(username="alice").groups.filter(name=OPERATORS_GROUP).exists()
    assert not users.get(username="bob").groups.exists()
    assert "Operator login created: alice / " in capsys.readouterr().out


def test_a_viewer_opening_a_login_dialog_is_told_who_can_log_accounts_in(people):
    account = TelegramAccount.objects.first()
    for url in ("/accounts/add/", f"/accounts/{account.pk}/code/", f"/accounts/{account.pk}/password/"):
        for headers in ({}, {"HTTP_HX_REQUEST": "true"}):
            seen = people["viewer"].get(url, **headers).content.decode()
            assert "Only operators add Telegram accounts and log them in" in seen, url
            assert 'method="post"' not in seen.split('id="dialog-slot"')[-1], f"{url}: no form to send"
        assert "Only operators" not in people["operator"].get(url).content.decode()
        assert f'action="{url}"' in people["operator"].get(url).content.decode()


def test_a_login_dialog_opened_by_its_address_shows_the_whole_accounts_page(people):
    page = people["operator"].get("/accounts/add/").content.decode()
    assert "Add a Telegram account" in page and "Console logins" in page
    assert "After 5 failed logins" in page and ">viewer<" in page, "the logins table is filled as on the list"


def test_the_walk_reaches_the_rows_the_cycle_made(people):
    for template in ("/channels/{pk}/", "/packages/{pk}/", "/ingestion/runs/{pk}/", "/api/accounts/{pk}/"):
        assert template in URLS
        url = template.format(**row_ids(template))
        assert people["viewer"].get(url).status_code == 200, url
