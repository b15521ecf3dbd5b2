"""The accounts API end to end against the sandbox: create, send code, sign in, refresh chats, delete."""

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from accounts.models import AccountChat, AuthState, Chat, TelegramAccount
from telegram.records import PREMIUM_UPLOAD_MAX_BYTES, UPLOAD_MAX_BYTES
from tests.support.accounts import GUARDED, PREMIUM, READER, STRANGER

pytestmark = pytest.mark.django_db

SECRET_FIELDS = {"session_sealed", "login_code_hash"}


def add_account(api, phone: str) -> dict:
    response = api.post("/api/accounts/", {"phone": phone}, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def log_in(api, phone: str, code: str) -> dict:
    account = add_account(api, phone)
    assert api.post(f"/api/accounts/{account['id']}/send-code/").status_code == 200
    response = api.post(f"/api/accounts/{account['id']}/sign-in/", {"code": code}, format="json")
    assert response.status_code == 200, response.json()
    return response.json()


def test_anonymous_clients_are_refused():
    response = APIClient().get("/api/accounts/")

    assert response.status_code in (401, 403)
    assert "credentials" in response.json()["message"]


def test_a_token_from_the_token_endpoint_opens_the_api(django_user_model):
    django_user_model.objects.create_user(username="script", password="s3cret-pass")
    client = APIClient()

    token = client.post("/api/auth/token/", {"username": "script", "password": "s3cret-pass"}, format="json")
    assert token.status_code == 200
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.json()['token']}")

    response = client.get("/api/accounts/")
    assert response.status_code == 200
    assert response.json()["results"] == []


def test_login_with_code(api, world):
    account = add_account(api, "+1 555 000 0001")
    assert account["phone"] == READER
    assert account["auth_state"] == AuthState.PENDING
    assert not SECRET_FIELDS & account.keys()

    sent = api.post(f"/api/accounts/{account['id']}/send-code/")
    assert sent.status_code == 200
    assert sent.json()["auth_state"] == AuthState.AWAITING_CODE

    wrong = api.post(f"/api/accounts/{account['id']}/sign-in/", {"code": "99999"}, format="json")
    assert wrong.status_code == 400
    assert wrong.json()["message"] == "The login code is wrong"  # the taxonomy's words, not Telethon's
    assert TelegramAccount.objects.get(pk=account["id"]).auth_state == AuthState.AWAITING_CODE

    right = api.post(f"/api/accounts/{account['id']}/sign-in/", {"code": "12345"}, format="json")
    assert right.status_code == 200
    body = right.json()
    assert body["auth_state"] == AuthState.AUTHENTICATED
    assert body["display_name"] == "Reader A"
    assert body["last_seen_at"]
    assert not SECRET_FIELDS & body.keys()
    assert TelegramAccount.objects.get(pk=account["id"]).session_sealed


@pytest.mark.parametrize(
    ("phone", "code", "premium", "upload_limit"),
    [(READER, "12345", False, UPLOAD_MAX_BYTES), (PREMIUM, "22222", True, PREMIUM_UPLOAD_MAX_BYTES)],
)
def test_premium_follows_the_world(api, world, phone, code, premium, upload_limit):
    account = log_in(api, phone, code)

    assert account["is_premium"] is premium
    assert account["upload_limit_bytes"] == upload_limit


def test_login_with_two_step_password(api, world):
    account = add_account(api, GUARDED)
    api.post(f"/api/accounts/{account['id']}/send-code/")

    after_code = api.post(f"/api/accounts/{account['id']}/sign-in/", {"code": "33333"}, format="json")
    assert after_code.status_code == 200
    assert after_code.json()["auth_state"] == AuthState.AWAITING_PASSWORD

    wrong = api.post(f"/api/accounts/{account['id']}/sign-in/", {"password": "wrong"}, format="json")
    assert wrong.status_code == 400
    assert wrong.json()["message"] == "The two-step verification password is wrong"

    right = api.post(f"/api/accounts/{account['id']}/sign-in/", {"password": "correct horse"}, format="json")
    assert right.status_code == 200
    assert right.json()["auth_state"] == AuthState.AUTHENTICATED


def test_sign_in_needs_exactly_one_of_code_and_password(api, world):
    account = add_account(api, READER)

    for payload in ({}, {"code": "12345", "password": "x"}):
        response = api.post(f"/api/accounts/{account['id']}/sign-in/", payload, format="json")
        assert response.status_code == 400
        assert response.json()["message"] == "Send either the login code or the two-step verification password."


def test_sign_in_before_send_code_is_a_conflict(api, world):
    account = add_account(api, READER)

    response = api.post(f"/api/accounts/{account['id']}/sign-in/", {"code": "12345"}, format="json")

    assert response.status_code == 409
    assert "send the code first" in response.json()["message"]


def test_refresh_chats_stores_the_chats(api, world):
    account = log_in(api, READER, "12345")

    response = api.post(f"/api/accounts/{account['id']}/refresh-chats/")

    assert response.status_code == 200
    assert response.json()["chats_known"] == 3
    assert response.json()["chats_refreshed_at"]
    forum = Chat.objects.get(telegram_id=1002)
    assert (forum.title, forum.type, forum.is_forum) == ("Makers forum", "supergroup", True)
    assert Chat.objects.get(telegram_id=1003).slow_mode_seconds == 30
    assert AccountChat.objects.filter(account_id=account["id"]).count() == 3


def test_refresh_chats_of_an_account_not_logged_in_is_a_conflict(api, world):
    account = add_account(api, READER)

    response = api.post(f"/api/accounts/{account['id']}/refresh-chats/")

    assert response.status_code == 409
    assert "not logged in" in response.json()["message"]


def test_flood_wait_is_429_with_retry_after(api, world):
    account = log_in(api, READER, "12345")
    world.fault_add({"op": "any", "account": READER, "error": "flood_wait", "seconds": 42})

    response = api.post(f"/api/accounts/{account['id']}/refresh-chats/")

    assert response.status_code == 429
    assert response.json()["retry_after"] == 42
    assert response["Retry-After"] == "42"
    assert "42" in response.json()["message"]


def test_bad_phone_numbers_get_a_message(api, world):
    add_account(api, READER)

    duplicate = api.post("/api/accounts/", {"phone": READER}, format="json")
    assert duplicate.status_code == 400
    assert duplicate.json()["message"] == f"phone: An account with phone {READER} already exists."

    malformed = api.post("/api/accounts/", {"phone": "12"}, format="json")
    assert malformed.status_code == 400
    assert "international format" in malformed.json()["message"]


def test_telegram_refusing_a_number_is_400(api, world):
    account = add_account(api, STRANGER)

    response = api.post(f"/api/accounts/{account['id']}/send-code/")

    assert response.status_code == 400
    assert response.json()["message"]


def test_list_filters_retrieve_and_delete(api, world):
    log_in(api, READER, "12345")
    pending = add_account(api, PREMIUM)

    listed = api.get("/api/accounts/", {"auth_state": AuthState.AUTHENTICATED}).json()
    assert [item["phone"] for item in listed["results"]] == [READER]
    assert api.get("/api/accounts/", {"auth_state": "bogus"}).status_code == 400
    assert api.get(f"/api/accounts/{pending['id']}/").json()["phone"] == PREMIUM

    assert api.delete(f"/api/accounts/{pending['id']}/").status_code == 204
    missing = api.get(f"/api/accounts/{pending['id']}/")
    assert missing.status_code == 404
    assert missing.json()["message"]


def test_schema_lists_the_account_endpoints(api):
    response = api.get("/api/schema/", {"format": "json"})

    assert response.status_code == 200
    paths = response.json()["paths"]
    for path in (
        "/api/auth/token/",
        "/api/accounts/",
        "/api/accounts/{id}/",
        "/api/accounts/{id}/send-code/",
        "/api/accounts/{id}/sign-in/",
        "/api/accounts/{id}/refresh-chats/",
    ):
        assert path in paths
    assert "session_sealed" not in response.content.decode()


def test_schema_is_valid_without_warnings(tmp_path):
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yml"))
