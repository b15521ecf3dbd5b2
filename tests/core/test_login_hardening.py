"""Failed logins are throttled (django-axes per username + address; a rate limit on the API token endpoint)."""

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from config.settings.security import trusted_proxies_parse

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery"


@pytest.fixture
def operator(django_user_model):
    return django_user_model.objects.create_user(username="ops", password=PASSWORD)


def page_login(client: Client, password: str, *, username: str = "ops", address: str = "203.0.113.7"):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR=address)


def token_login(client: APIClient, password: str, *, username: str = "ops", address: str = "203.0.113.7"):
    return client.post(
        "/api/auth/token/", {"username": username, "password": password}, format="json", REMOTE_ADDR=address
    )


def test_the_login_page_locks_a_user_out_after_the_failure_limit(client, operator, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert page_login(client, "wrong").status_code == 200  # the form again, with its error

    locked = page_login(client, "wrong")

    assert locked.status_code == 429
    assert locked["Retry-After"] == str(15 * 60)
    text = locked.content.decode()
    assert "Too many failed logins for this user from your address. Try again in 15 minutes" in text
    assert "ask an operator to unlock it on the Accounts page" in text
    # Even the right password is refused while locked out, and the lockout is not extended by trying.
    assert page_login(client, PASSWORD).status_code == 429
    assert "_auth_user_id" not in client.session
    attempt = AccessAttempt.objects.get()
    assert (attempt.username, attempt.ip_address, attempt.failures_since_start) == (
        "ops",
        "203.0.113.7",
        settings.AXES_FAILURE_LIMIT,
    )
    assert PASSWORD not in attempt.post_data


def test_the_lockout_is_per_username_and_address(client, operator, django_user_model, settings):
    django_user_model.objects.create_user(username="other", password=PASSWORD)
    for _ in range(settings.AXES_FAILURE_LIMIT):
        page_login(client, "wrong")
    assert page_login(client, PASSWORD).status_code == 429

    assert page_login(Client(), PASSWORD, address="198.51.100.4").status_code == 302  # same user, elsewhere
    assert page_login(Client(), PASSWORD, username="other").status_code == 302  # same address, another user


def test_the_lockout_ends_after_the_cool_off(client, operator, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        page_login(client, "wrong")
    assert page_login(client, PASSWORD).status_code == 429

    AccessAttempt.objects.update(attempt_time=AccessAttempt.objects.get().attempt_time - timedelta(minutes=16))

    assert page_login(client, PASSWORD).status_code == 302


def test_a_successful_login_clears_earlier_failures(client, operator, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        page_login(client, "wrong")
    assert page_login(client, PASSWORD).status_code == 302
    client.logout()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert page_login(client, "wrong").status_code == 200
    assert page_login(client, PASSWORD).status_code == 302


def test_the_api_token_endpoint_counts_toward_the_same_lockout(operator, settings):
    api = APIClient()
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        wrong = token_login(api, "wrong")
        assert wrong.status_code == 400
        assert "Unable to log in" in wrong.json()["message"]

    locked = token_login(api, "wrong")
    assert locked.status_code == 429
    assert locked.json()["message"].startswith("Too many failed logins for this user from your address.")
    assert locked["Retry-After"] == str(15 * 60)
    assert token_login(api, PASSWORD).status_code == 429
    # The login page shares the count: same user, same address.
    assert page_login(Client(), PASSWORD).status_code == 429


def test_the_api_token_endpoint_is_rate_limited_per_address_whatever_the_username(operator, settings):
    settings.API_TOKEN_THROTTLE_RATE = "3/min"
    api = APIClient()
    for number in range(3):
        assert token_login(api, "wrong", username=f"guess{number}").status_code == 400

    throttled = token_login(api, PASSWORD)

    assert throttled.status_code == 429
    assert "Request was throttled" in throttled.json()["message"]
    assert int(throttled["Retry-After"]) > 0
    assert token_login(APIClient(), PASSWORD, address="198.51.100.4").status_code == 200


def test_a_locked_out_json_client_gets_json(client, operator, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        page_login(client, "wrong")
    response = client.post(
        reverse("login"),
        {"username": "ops", "password": PASSWORD},
        REMOTE_ADDR="203.0.113.7",
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 429
    assert "Too many failed logins" in response.json()["message"]


def test_behind_a_trusted_proxy_the_client_address_is_the_proxys_last_entry(client, operator, settings):
    settings.TRUSTED_PROXIES = trusted_proxies_parse("10.0.0.0/8")

    def via_proxy(password: str, forwarded: str):
        return client.post(
            reverse("login"),
            {"username": "ops", "password": password},
            REMOTE_ADDR="10.0.0.2",  # the proxy
            HTTP_X_FORWARDED_FOR=forwarded,
        )

    # The attacker writes whatever it likes on the left; the proxy appends the real address.
    for number in range(settings.AXES_FAILURE_LIMIT):
        via_proxy("wrong", f"192.0.2.{number}, 203.0.113.9")
    assert via_proxy(PASSWORD, "203.0.113.9").status_code == 429
    assert AccessAttempt.objects.get().ip_address == "203.0.113.9"
    assert via_proxy(PASSWORD, "198.51.100.20").status_code == 302  # the operator, from elsewhere
