"""People (core/people.py): logins added by invite link or with a password shown once, roles, deactivation, password
resets, the last operator kept, every change audited — through the page, the API and `create_login`."""

import re
import threading
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from core import people
from core.errors import OperatorError
from core.models import AuditChange, AuditEntry, Invite, LoginOrigin
from core.roles import OPERATORS_GROUP, is_operator
from core.tokens import api_token_create

pytestmark = pytest.mark.django_db(transaction=True)

LINK = re.compile(r'value="(http://testserver/invite/([\w-]+)/)"')
PASSWORD = re.compile(r'class="shown-secret" type="text" readonly value="([^"]+)"')
CHOSEN = "a-long-chosen-passphrase"


def _users():
    return get_user_model().objects


def _make(username: str, *, operator: bool = False, password: str = "first-long-password"):
    login = _users().create_user(username=username, password=password)
    if operator:
        login.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    return login


def _fresh(login):
    return _users().get(pk=login.pk)


def _invite_link(operator, **fields) -> tuple[str, str]:
    page = operator.post("/people/add/", {"role": "viewer", "expires_in_days": 7, "how": "invite", **fields})
    assert page.status_code == 200, page.content.decode()
    url, token = LINK.search(page.content.decode()).groups()
    return url.removeprefix("http://testserver"), token


def _entries_since(mark: int) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(pk__gt=mark).order_by("pk"))


def _mark() -> int:
    return AuditEntry.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def _logged_in_client(username: str, password: str) -> Client:
    browser = Client()
    assert browser.post("/login/", {"username": username, "password": password}).status_code == 302
    assert browser.get("/people/").status_code in {200, 403}, "logged in"
    return browser


# Invites ---------------------------------------------------------------------------------------------------------


def test_an_invite_is_made_used_and_logs_the_person_in_with_its_role(operator):
    url, token = _invite_link(operator, role="operator")
    assert not Invite.objects.filter(token_hash=token).exists(), "only the hash of the link's secret is kept"
    stranger = Client()
    assert "Choose a login name and" in stranger.get(url).content.decode()

    mark = _mark()
    answer = stranger.post(url, {"username": "vera", "password": CHOSEN, "password_again": CHOSEN})
    assert answer.status_code == 302 and answer["Location"] == "/"
    vera = _users().get(username="vera")
    assert is_operator(vera) and vera.check_password(CHOSEN)
    origin = LoginOrigin.objects.get(login=vera)
    assert (origin.added_by.username, origin.how) == ("operator", "invite")
    assert stranger.get("/people/").status_code == 200, "logged in as the new operator"
    [entry] = _entries_since(mark)
    assert (entry.actor, entry.user_id, entry.status_code) == ("vera", vera.pk, 302)
    assert CHOSEN not in str(list(AuditChange.objects.values_list("fields", flat=True)))
    assert token not in str(list(AuditChange.objects.values_list("fields", flat=True)))
    listed = operator.get("/people/").content.decode()
    assert "vera" in listed and "Links not used yet" in listed and "No link waits to be used" in listed


def test_an_invite_works_once(operator):
    url, _token = _invite_link(operator)
    Client().post(url, {"username": "vera", "password": CHOSEN, "password_again": CHOSEN})
    for method in ("get", "post"):
        again = getattr(Client(), method)(url, {"username": "mallory", "password": CHOSEN, "password_again": CHOSEN})
        assert again.status_code == 410
        assert "This link was already used; it works once." in again.content.decode()
    assert not _users().filter(username="mallory").exists()


def test_an_expired_invite_says_so(operator):
    url, _token = _invite_link(operator)
    Invite.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    answer = Client().post(url, {"username": "vera", "password": CHOSEN, "password_again": CHOSEN})
    assert (
        answer.status_code == 410 and "This link has expired; ask an operator for a new one." in answer.content.decode()
    )
    assert not _users().filter(username="vera").exists()
    assert Client().get("/invite/not-a-real-link/").status_code == 410


def test_a_withdrawn_invite_says_so(operator):
    url, _token = _invite_link(operator)
    operator.post(f"/people/invites/{Invite.objects.get().pk}/revoke/")
    answer = Client().get(url)
    assert answer.status_code == 410 and "withdrawn" in answer.content.decode()


def test_the_same_link_sent_twice_at_once_is_used_once(operator):
    _url, token = _invite_link(operator)
    outcomes = []
    start = threading.Barrier(2)

    def accept(name: str) -> None:
        try:
            start.wait()
            outcomes.append(people.invite_accept(token=token, username=name, password=CHOSEN).username)
        except OperatorError as exc:
            outcomes.append(exc.message)
        finally:
            connection.close()

    threads = [threading.Thread(target=accept, args=(name,)) for name in ("vera", "walt")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    made = [outcome for outcome in outcomes if outcome in {"vera", "walt"}]
    assert len(made) == 1 and len(outcomes) == 2, outcomes
    assert _users().filter(username__in=["vera", "walt"]).count() == 1


def test_a_preset_name_is_kept_and_bad_input_is_told_on_the_form(operator):
    _make("taken")
    refused = operator.post("/people/add/", {"username": "taken", "role": "viewer", "expires_in_days": 7})
    assert refused.status_code == 400 and "A login named &#x27;taken&#x27; already exists" in refused.content.decode()
    url, _token = _invite_link(operator, username="vera")
    stranger = Client()
    assert "Your login name is <strong>vera</strong>" in stranger.get(url).content.decode()
    short = stranger.post(url, {"password": "short", "password_again": "short"})
    assert short.status_code == 400 and "too short" in short.content.decode()
    differ = stranger.post(url, {"password": CHOSEN, "password_again": CHOSEN + "x"})
    assert differ.status_code == 400 and "The two passwords differ" in differ.content.decode()
    assert stranger.post(url, {"username": "other", "password": CHOSEN, "password_again": CHOSEN}).status_code == 302
    assert _users().get(username="vera").check_password(CHOSEN) and not _users().filter(username="other").exists()


def test_a_preset_name_taken_meanwhile_is_told_on_the_invite_page(operator):
    url, _token = _invite_link(operator, username="vera")
    _make("Vera")
    taken = Client().post(url, {"password": CHOSEN, "password_again": CHOSEN})
    assert taken.status_code == 400 and "A login named &#x27;vera&#x27; already exists" in taken.content.decode()


# Passwords shown once --------------------------------------------------------------------------------------------


def test_a_login_made_with_a_password_shows_it_once(operator):
    mark = _mark()
    page = operator.post(
        "/people/add/", {"username": "walt", "role": "viewer", "expires_in_days": 7, "how": "password"}
    )
    assert page.status_code == 200
    password = PASSWORD.search(page.content.decode()).group(1)
    walt = _users().get(username="walt")
    assert walt.check_password(password) and walt.password != password and not is_operator(walt)
    assert password not in operator.get("/people/").content.decode(), "shown once"
    [entry] = _entries_since(mark)
    assert entry.actor == "operator" and {c.kind for c in entry.changes.all()} >= {"auth.User", "core.LoginOrigin"}
    assert password not in str([c.fields for c in entry.changes.all()])


def test_a_password_reset_shows_the_new_one_once_and_ends_the_old_sessions(operator):
    walt = _make("walt")
    browser = _logged_in_client("walt", "first-long-password")
    page = operator.post(f"/people/{walt.pk}/password/", {"how": "password"})
    password = PASSWORD.search(page.content.decode()).group(1)
    assert _fresh(walt).check_password(password) and not _fresh(walt).check_password("first-long-password")
    assert browser.get("/").status_code == 302, "logged out"
    assert password not in operator.get("/people/").content.decode()


def test_an_operator_resetting_their_own_password_stays_logged_in_here_only(operator):
    me = _users().get(username="operator")
    elsewhere = _logged_in_client("operator", "s3cret-pass")
    page = operator.post(f"/people/{me.pk}/password/", {"how": "password"})
    assert _fresh(me).check_password(PASSWORD.search(page.content.decode()).group(1))
    assert operator.get("/people/").status_code == 200, "this session stays"
    assert elsewhere.get("/").status_code == 302, "the other one ended"


def test_a_password_link_lets_the_person_choose_a_new_one_once(operator):
    walt = _make("walt")
    page = operator.post(f"/people/{walt.pk}/password/", {"how": "link"})
    url = LINK.search(page.content.decode()).group(1).removeprefix("http://testserver")
    assert _fresh(walt).check_password("first-long-password"), "the old one works until the link is used"
    stranger = Client()
    assert "New password for walt" in stranger.get(url).content.decode()
    assert stranger.post(url, {"password": CHOSEN, "password_again": CHOSEN}).status_code == 302
    assert _fresh(walt).check_password(CHOSEN)
    assert Client().get(url).status_code == 410


# Roles and deactivation ------------------------------------------------------------------------------------------


def test_an_operator_changes_roles_and_the_trail_says_so(operator):
    walt = _make("walt")
    mark = _mark()
    assert operator.post(f"/people/{walt.pk}/role/", {"role": "operator"}).status_code == 302
    assert is_operator(_fresh(walt))
    [entry] = _entries_since(mark)
    assert entry.actor == "operator"
    [membership] = entry.changes.all()
    assert (membership.kind, membership.object_id, membership.operation) == ("auth.User", str(walt.pk), "changed")
    assert membership.fields == {"role": ["viewer", "operator"]}
    assert entry.summary == f"operator changed the role of user walt (#{walt.pk})"
    assert operator.post(f"/people/{walt.pk}/role/", {"role": "viewer"}).status_code == 302
    assert not is_operator(_fresh(walt))
    assert "walt is now viewer." in operator.get("/people/").content.decode()


def test_demoting_a_superuser_takes_away_the_superuser_flag(operator, admin_user):
    assert operator.post(f"/people/{admin_user.pk}/role/", {"role": "viewer"}).status_code == 302
    admin = _fresh(admin_user)
    assert not admin.is_superuser and not is_operator(admin)


def test_deactivating_ends_the_persons_sessions_and_tokens_at_once(operator):
    walt = _make("walt")
    browser = _logged_in_client("walt", "first-long-password")
    _, secret = api_token_create(owner=walt, name="walt's script", scope="read")
    other = _logged_in_client("operator", "s3cret-pass")
    sessions = Session.objects.count()

    assert operator.post(f"/people/{walt.pk}/deactivate/").status_code == 302
    assert not _fresh(walt).is_active
    assert browser.get("/").status_code == 302, "sent to the login page"
    assert Session.objects.count() == sessions - 1, "walt's session ended"
    assert other.get("/").status_code == 200, "the others' did not"
    refused_token = Client(HTTP_AUTHORIZATION=f"Token {secret}").get("/api/packages/")
    assert refused_token.status_code == 401 and refused_token.json()["message"] == "This token's login is deactivated."
    refused = Client().post("/login/", {"username": "walt", "password": "first-long-password"})
    assert refused.status_code == 200, "a deactivated login cannot log in"
    assert "Deactivated" in operator.get("/people/").content.decode()

    assert operator.post(f"/people/{walt.pk}/reactivate/").status_code == 302
    assert _logged_in_client("walt", "first-long-password").get("/").status_code == 200


# The last operator -----------------------------------------------------------------------------------------------


def test_the_last_operator_cannot_demote_or_deactivate_themself_on_the_page(operator):
    me = _users().get(username="operator")
    for action, data in (("role", {"role": "viewer"}), ("deactivate", {})):
        refused = operator.post(f"/people/{me.pk}/{action}/", data)
        assert refused.status_code == 409
        assert "you are the last active operator" in refused.content.decode()
    assert is_operator(_fresh(me)) and _fresh(me).is_active
    _make("vera", operator=True)
    assert operator.post(f"/people/{me.pk}/role/", {"role": "viewer"}).status_code == 302, "another one remains"


def test_the_last_operator_cannot_be_demoted_or_deactivated_by_anyone(db):
    vera = _make("vera", operator=True)
    _make("walt", operator=True)
    _users().filter(username="walt").update(is_active=False)  # a deactivated operator does not count
    for change in (
        lambda: people.login_role_change(login=vera, role="viewer"),
        lambda: people.login_deactivate(login=vera),
    ):
        with pytest.raises(OperatorError, match="vera is the last active operator"):
            change()


def test_two_operators_demoting_each_other_at_once_leave_one(db):
    vera, walt = _make("vera", operator=True), _make("walt", operator=True)
    outcomes = []
    start = threading.Barrier(2)

    def demote(login, by) -> None:
        try:
            start.wait()
            people.login_role_change(login=login, role="viewer", by=by)
            outcomes.append("demoted")
        except OperatorError as exc:
            outcomes.append(exc.message)
        finally:
            connection.close()

    threads = [threading.Thread(target=demote, args=pair) for pair in ((vera, walt), (walt, vera))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("demoted") == 1, outcomes
    [refused] = [outcome for outcome in outcomes if outcome != "demoted"]
    assert "is the last active operator, and the console needs one" in refused
    assert people.operators_active().count() == 1


# API -------------------------------------------------------------------------------------------------------------


@pytest.fixture
def operator_api():
    login = _make("operator", operator=True)
    client = APIClient()
    client.force_authenticate(login)
    return client, login


def test_the_api_adds_invites_changes_and_refuses_with_messages(operator_api):
    api, me = operator_api
    added = api.post("/api/people/", {"username": "walt", "role": "viewer"}, format="json")
    assert added.status_code == 201 and added.json()["added_by"] == "operator"
    assert _users().get(username="walt").check_password(added.json()["password"])
    walt_id = added.json()["id"]

    invite = api.post("/api/invites/", {"role": "operator", "expires_in_days": 3}, format="json")
    assert invite.status_code == 201
    link = invite.json()["link"].removeprefix("http://testserver")
    assert Client().post(link, {"username": "vera", "password": CHOSEN, "password_again": CHOSEN}).status_code == 302
    assert is_operator(_users().get(username="vera"))

    assert api.post(f"/api/people/{walt_id}/role/", {"role": "operator"}, format="json").json()["role"] == "operator"
    assert api.post(f"/api/people/{walt_id}/deactivate/", format="json").json()["is_active"] is False
    reset = api.post(f"/api/people/{walt_id}/password/", {"how": "password"}, format="json")
    assert reset.status_code == 409 and reset.json()["message"] == "walt is deactivated; reactivate the login first."
    assert api.post(f"/api/people/{walt_id}/reactivate/", format="json").json()["is_active"] is True
    new = api.post(f"/api/people/{walt_id}/password/", {"how": "password"}, format="json").json()["password"]
    assert _users().get(pk=walt_id).check_password(new)

    bad_role = api.post("/api/people/", {"username": "x", "role": "admin"}, format="json")
    assert bad_role.status_code == 400 and bad_role.json()["message"].startswith("role:")
    taken = api.post("/api/people/", {"username": "WALT", "role": "viewer"}, format="json")
    assert (
        taken.status_code == 400
        and taken.json()["message"] == "username: A login named 'WALT' already exists; pick another name."
    )
    missing = api.post("/api/people/99999/role/", {"role": "viewer"}, format="json")
    assert missing.status_code == 404 and "GET /api/people/" in missing.json()["message"]
    names = [person["username"] for person in api.get("/api/people/").json()]
    assert names[:3] == ["operator", "vera", "walt"], names


def test_the_api_keeps_the_last_operator(operator_api):
    api, me = operator_api
    for action, data in (("role", {"role": "viewer"}), ("deactivate", {})):
        refused = api.post(f"/api/people/{me.pk}/{action}/", data, format="json")
        assert refused.status_code == 409
        assert "you are the last active operator" in refused.json()["message"]
    assert AuditEntry.objects.filter(actor="operator", status_code=409).count() == 2


def test_viewers_get_no_people_page_nor_api(client):
    viewer = _make("viewer")
    client.force_login(viewer)
    page = client.get("/people/")
    assert page.status_code == 403 and "People is for operators" in page.content.decode()
    assert 'href="/people/"' not in client.get("/").content.decode(), "no link in the navigation"
    api = APIClient()
    api.force_authenticate(viewer)
    assert api.get("/api/people/").status_code == 403
    assert api.get("/api/invites/").status_code == 403


def test_create_login_goes_through_the_same_service(capsys):
    call_command("create_login", "alice", "--role", "operator")
    alice = _users().get(username="alice")
    assert is_operator(alice) and LoginOrigin.objects.get(login=alice).how == "command"
    password = capsys.readouterr().out.strip().rsplit(" / ", 1)[1]
    assert alice.check_password(password)
    with pytest.raises(Exception, match="A login named 'ALICE' already exists"):
        call_command("create_login", "ALICE", "--role", "viewer")


@pytest.mark.parametrize("written", ["%C2%B9", "%D9%A3", "99999999999", "-1"])
def test_an_id_that_is_no_login_id_is_a_404_with_a_message(operator_api, written):
    api, _ = operator_api
    # "¹" passes str.isdigit and int() refuses it; "٣" is another script's 3; the others no integer id holds.
    for answer in (
        api.get(f"/api/people/{written}/"),
        api.post(f"/api/people/{written}/password/", {"how": "link"}, format="json"),
        api.post(f"/api/people/{written}/role/", {"role": "viewer"}, format="json"),
    ):
        assert answer.status_code == 404 and "GET /api/people/" in answer.json()["message"]
