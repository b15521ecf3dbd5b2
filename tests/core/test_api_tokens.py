"""Named API tokens (core/tokens.py): hashed, scoped, expiring, revocable, named in the audit trail; old keys
migrated."""

import hashlib
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from core.models import ApiToken, AuditEntry, Invite, Notification
from core.roles import OPERATORS_GROUP
from core.tokens import READ_ONLY_MESSAGE, VIEWER_WRITE_MESSAGE, api_token_create, api_token_revoke
from tests.support.migrations import latest, migrate

pytestmark = pytest.mark.django_db

WRITE = "/api/notifications/read-all/"
User = get_user_model()


@pytest.fixture
def vera(django_user_model):
    user = django_user_model.objects.create_user("vera", password="s3cret-pass")
    user.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    return user


@pytest.fixture
def viewer(django_user_model):
    return django_user_model.objects.create_user("victor", password="s3cret-pass")


def by_token(secret: str) -> Client:
    return Client(HTTP_AUTHORIZATION=f"Token {secret}")


def test_a_write_token_writes_and_a_read_token_only_reads(vera):
    _, write = api_token_create(owner=vera, name="backup script", scope="write")
    _, read = api_token_create(owner=vera, name="dashboard", scope="read")

    assert by_token(write).post(WRITE).status_code == 200
    assert by_token(read).get("/api/notifications/").status_code == 200
    refused = by_token(read).post(WRITE)
    assert refused.status_code == 403
    assert refused.json() == {"message": READ_ONLY_MESSAGE}


def test_a_read_token_adds_no_login_changes_no_role_and_makes_no_link(vera, viewer):
    """People and invites add IsOperator to the checks every API view makes; they do not replace the scope's."""
    _, read = api_token_create(owner=vera, name="dashboard", scope="read")
    logins, invites = list(User.objects.values_list("pk", "username")), Invite.objects.count()
    attempts = [
        ("/api/people/", {"username": "mallory", "role": "operator"}),
        (f"/api/people/{viewer.pk}/role/", {"role": "operator"}),
        ("/api/invites/", {"role": "operator"}),
        (f"/api/people/{vera.pk}/password/", {"how": "link"}),
    ]

    for url, data in attempts:
        refused = by_token(read).post(url, data, content_type="application/json")
        assert refused.status_code == 403, url
        assert refused.json() == {"message": READ_ONLY_MESSAGE}, url
    assert list(User.objects.values_list("pk", "username")) == logins
    assert Invite.objects.count() == invites
    assert not viewer.groups.exists()


def test_expired_and_revoked_tokens_are_refused_with_401_saying_which(vera):
    expired, expired_secret = api_token_create(owner=vera, name="old", scope="write", days=1)
    ApiToken.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    revoked, revoked_secret = api_token_create(owner=vera, name="leaked", scope="write")
    api_token_revoke(token=revoked)

    for secret, word in (
        (expired_secret, "expired"),
        (revoked_secret, "revoked"),
        ("sct_nothing-like-it", "not known"),
    ):
        for answer in (by_token(secret).get("/api/notifications/"), by_token(secret).post(WRITE)):
            assert answer.status_code == 401, (word, answer.status_code)
            assert answer["WWW-Authenticate"] == "Token"
            assert word in answer.json()["message"] and "Tokens page" in answer.json()["message"]


def test_only_a_hash_is_kept_and_the_secret_starts_with_its_visible_prefix(vera):
    token, secret = api_token_create(owner=vera, name="backup script", scope="write")

    assert token.secret_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert secret.startswith(token.prefix) and len(secret) > 40 and len(token.prefix) == 12
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM core_apitoken")
        stored = " ".join(map(str, cursor.fetchall()))
    assert secret not in stored and secret[len(token.prefix) :] not in stored


def test_a_token_lasts_the_default_unless_told_and_never_beyond_the_maximum(vera, settings):
    settings.API_TOKEN_DEFAULT_DAYS, settings.API_TOKEN_MAX_DAYS = 30, 60
    default, _ = api_token_create(owner=vera, name="a", scope="read")
    assert timedelta(days=29, hours=23) < default.expires_at - timezone.now() <= timedelta(days=30)

    api = Client()
    api.force_login(vera)
    too_long = api.post("/api/tokens/", {"name": "b", "scope": "read", "days": 61}, content_type="application/json")
    assert too_long.status_code == 400 and "1 to 60 days" in too_long.json()["message"]
    assert ApiToken.objects.count() == 1


def test_last_use_is_written_at_most_once_a_minute(vera):
    token, secret = api_token_create(owner=vera, name="poller", scope="read")
    client = by_token(secret)

    client.get("/api/notifications/")
    first = ApiToken.objects.get(pk=token.pk).last_used_at
    assert first is not None
    with CaptureQueriesContext(connection) as queries:
        client.get("/api/notifications/")
    assert ApiToken.objects.get(pk=token.pk).last_used_at == first
    assert not [q for q in queries.captured_queries if q["sql"].startswith('UPDATE "core_apitoken"')]

    ApiToken.objects.filter(pk=token.pk).update(last_used_at=first - timedelta(minutes=2))
    client.get("/api/notifications/")
    assert ApiToken.objects.get(pk=token.pk).last_used_at > first - timedelta(minutes=2)


def test_the_api_makes_a_token_showing_its_secret_once_and_revokes_it(vera):
    api = Client()
    api.force_login(vera)

    made = api.post("/api/tokens/", {"name": "backup script", "scope": "write"}, content_type="application/json")
    assert made.status_code == 201
    secret = made.json()["secret"]
    assert made.json()["owner"] == "vera" and made.json()["status"] == "usable"
    assert by_token(secret).post(WRITE).status_code == 200

    listed = api.get("/api/tokens/").json()["results"]
    assert [t["name"] for t in listed] == ["backup script"] and "secret" not in listed[0]
    assert secret not in api.get(f"/api/tokens/{listed[0]['id']}/").content.decode()

    revoked = by_token(secret).post(f"/api/tokens/{listed[0]['id']}/revoke/")
    assert revoked.status_code == 200 and revoked.json()["status"] == "revoked"
    assert by_token(secret).get("/api/notifications/").status_code == 401


def test_a_viewer_makes_read_tokens_only(viewer):
    api = Client()
    api.force_login(viewer)

    refused = api.post("/api/tokens/", {"name": "w", "scope": "write"}, content_type="application/json")
    assert refused.status_code == 409 and refused.json()["message"] == VIEWER_WRITE_MESSAGE
    made = api.post("/api/tokens/", {"name": "look", "scope": "read"}, content_type="application/json")
    assert made.status_code == 201
    secret = made.json()["secret"]
    assert by_token(secret).get("/api/packages/").status_code == 200
    assert by_token(secret).post(WRITE).status_code == 403

    page = Client()
    page.force_login(viewer)
    answer = page.post("/tokens/new/", {"name": "w", "scope": "write", "days": 30})
    assert answer.status_code == 400  # "write" is not among a viewer's choices
    assert list(ApiToken.objects.values_list("name", flat=True)) == ["look"]


def test_each_person_sees_their_own_and_operators_see_and_revoke_everyones(vera, viewer):
    mine, _ = api_token_create(owner=viewer, name="victor's look", scope="read")
    theirs, _ = api_token_create(owner=vera, name="vera's backup", scope="write")
    as_viewer, as_vera = Client(), Client()
    as_viewer.force_login(viewer)
    as_vera.force_login(vera)

    assert [t["name"] for t in as_viewer.get("/api/tokens/").json()["results"]] == ["victor's look"]
    assert as_viewer.post(f"/api/tokens/{theirs.pk}/revoke/").status_code == 404
    assert as_viewer.post(f"/tokens/{theirs.pk}/revoke/").status_code == 404
    assert {t["name"] for t in as_vera.get("/api/tokens/").json()["results"]} == {"victor's look", "vera's backup"}

    assert as_vera.post(f"/tokens/{mine.pk}/revoke/", headers={"HX-Request": "true"}).status_code == 200
    assert ApiToken.objects.get(pk=mine.pk).revoked_at is not None
    assert ApiToken.objects.get(pk=theirs.pk).revoked_at is None


@pytest.mark.django_db(transaction=True)
def test_the_audit_trail_names_the_token(vera):
    _, secret = api_token_create(owner=vera, name="backup script", scope="write")
    _, read = api_token_create(owner=vera, name="dashboard", scope="read")
    Notification.objects.create(type="t", severity="info", title="Disk almost full", subject="disk")

    by_token(secret).post(WRITE)  # marks it read: a change
    by_token(read).post(WRITE)

    entries = AuditEntry.objects.order_by("pk")
    assert [(e.actor, e.user_id, e.status_code) for e in entries] == [
        ("vera's token 'backup script'", vera.pk, 200),
        ("vera's token 'dashboard'", vera.pk, 403),
    ]


def test_the_tokens_page_shows_a_new_secret_once_and_lists_without_it(vera):
    page = Client()
    page.force_login(vera)

    made = page.post(
        "/tokens/new/", {"name": "backup script", "scope": "write", "days": 7}, headers={"HX-Request": "true"}
    )
    assert made.status_code == 200
    token = ApiToken.objects.get()
    html = made.content.decode()
    secret = html.split('id="token-secret" type="text" value="')[1].split('"')[0]
    assert hashlib.sha256(secret.encode()).hexdigest() == token.secret_hash
    assert 'data-copy="token-secret"' in html and "<html" not in html  # the partial only
    assert timedelta(days=6, hours=23) < token.expires_at - timezone.now() <= timedelta(days=7)

    listed = page.get("/tokens/").content.decode()
    assert "backup script" in listed and token.prefix in listed and secret not in listed
    assert by_token(secret).post(WRITE).status_code == 200

    empty = page.post("/tokens/new/", {"name": " ", "scope": "read", "days": 7})
    assert empty.status_code == 400 and "Give the token a name" in empty.content.decode()


def test_the_token_endpoint_makes_a_named_token(vera, viewer):
    answer = Client().post("/api/auth/token/", {"username": "vera", "password": "s3cret-pass", "name": "ci"})
    assert answer.status_code == 200
    assert answer.json()["name"] == "ci" and answer.json()["scope"] == "write"
    assert by_token(answer.json()["token"]).post(WRITE).status_code == 200

    looker = Client().post("/api/auth/token/", {"username": "victor", "password": "s3cret-pass"}).json()
    assert looker["scope"] == "read" and looker["name"] == "api login"


def test_metrics_take_an_operators_usable_token_only(vera, viewer):
    _, operators = api_token_create(owner=vera, name="prometheus", scope="read")
    _, viewers = api_token_create(owner=viewer, name="prometheus", scope="read")
    revoked, revoked_secret = api_token_create(owner=vera, name="old prometheus", scope="read")
    api_token_revoke(token=revoked)

    assert by_token(operators).get("/metrics").status_code == 200
    assert by_token(viewers).get("/metrics").status_code in (401, 403)
    assert by_token(revoked_secret).get("/metrics").status_code == 401
    assert by_token(revoked_secret).get("/api/metrics/").status_code == 401


# The migration of DRF's authtoken keys -----------------------------------------------------------------------

BEFORE = [("core", "0006_audit_trail")]
AFTER = [("core", "0007_api_tokens")]


@pytest.mark.django_db(transaction=True)
def test_an_old_authtoken_key_becomes_a_named_write_token_and_its_table_goes(vera, settings):
    key = "0123456789abcdef0123456789abcdef01234567"
    try:
        migrate(BEFORE)
        with connection.cursor() as cursor:
            # DRF's authtoken_token as its migrations made it, with one key in clear.
            cursor.execute(
                "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created timestamptz NOT NULL, "
                "user_id integer NOT NULL UNIQUE REFERENCES auth_user(id))"
            )
            cursor.execute("INSERT INTO authtoken_token VALUES (%s, now(), %s)", [key, vera.pk])
            cursor.execute(
                "INSERT INTO django_migrations (app, name, applied) VALUES ('authtoken', '0001_initial', now())"
            )
        migrate(AFTER)

        token = ApiToken.objects.get()
        assert (token.owner_id, token.name, token.scope, token.prefix) == (vera.pk, "migrated", "write", key[:8])
        assert token.secret_hash == hashlib.sha256(key.encode()).hexdigest()
        assert timedelta(days=settings.API_TOKEN_DEFAULT_DAYS - 1) < token.expires_at - timezone.now()
        assert "authtoken_token" not in connection.introspection.table_names()
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM django_migrations WHERE app = 'authtoken'")
            assert cursor.fetchone()[0] == 0
        # The script that held the key keeps working.
        assert by_token(key).post(WRITE).status_code == 200
    finally:
        migrate(latest())


def test_create_token_prints_the_secret_once_and_refuses_a_viewer_write_token(vera, viewer, capsys):
    call_command("create_token", "vera", "--name", "backup script", "--scope", "write", "--days", "30")
    printed = capsys.readouterr().out
    token = ApiToken.objects.get(name="backup script")
    secret = printed.split(": ", 1)[1].split()[0]
    assert token.secret_hash == hashlib.sha256(secret.encode()).hexdigest() and token.scope == "write"
    assert by_token(secret).post(WRITE).status_code == 200

    with pytest.raises(CommandError, match="Viewers may make read tokens only"):
        call_command("create_token", "victor", "--name", "w", "--scope", "write")
    with pytest.raises(CommandError, match="No active login"):
        call_command("create_token", "nobody", "--name", "x")
