"""The Accounts page and its HTMX login dialogs, through the Django test client."""

import pytest
from django.urls import reverse

from accounts.models import AuthState, TelegramAccount
from tests.support.accounts import GUARDED, PREMIUM, READER, STRANGER

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


def htmx_post(client, url: str, data: dict | None = None):
    response = client.post(url, data or {}, **HTMX)
    assert response.status_code == 200
    return response.content.decode()


def add(client, phone: str) -> TelegramAccount:
    htmx_post(client, reverse("accounts:add"), {"phone": phone})
    return TelegramAccount.objects.get(phone=phone)


def test_accounts_page_lists_accounts(admin_client):
    TelegramAccount.objects.create(
        phone=PREMIUM, display_name="Premium P", auth_state=AuthState.AUTHENTICATED, is_premium=True
    )
    TelegramAccount.objects.create(phone=READER)

    html = admin_client.get(reverse("accounts:list")).content.decode()

    assert PREMIUM in html and READER in html
    assert "Premium P" in html
    assert "★ Premium" in html
    assert 'class="badge state--authenticated"' in html
    assert "Not logged in" in html
    assert "Refresh chats" in html


def test_add_account_opens_the_code_dialog_and_adds_the_row(admin_client, world):
    html = htmx_post(admin_client, reverse("accounts:add"), {"phone": READER})

    account = TelegramAccount.objects.get(phone=READER)
    assert account.auth_state == AuthState.AWAITING_CODE
    assert "<dialog" in html and "Enter the login code" in html
    assert 'hx-swap-oob="beforeend:#account-rows"' in html
    assert f'id="account-{account.pk}"' in html


def test_add_account_errors_stay_in_the_dialog(admin_client, world):
    malformed = htmx_post(admin_client, reverse("accounts:add"), {"phone": "12"})
    assert "<dialog" in malformed and "international format" in malformed

    refused = htmx_post(admin_client, reverse("accounts:add"), {"phone": STRANGER})
    assert "<dialog" in refused and 'class="field-error"' in refused
    # Nothing half-added: the operator fixes the number and tries again.
    assert not TelegramAccount.objects.filter(phone=STRANGER).exists()


def test_wrong_code_keeps_the_dialog_open_and_right_code_closes_it(admin_client, world):
    account = add(admin_client, PREMIUM)
    url = reverse("accounts:code", args=[account.pk])

    wrong = htmx_post(admin_client, url, {"code": "00000"})
    assert "<dialog" in wrong and 'class="field-error"' in wrong
    assert "The login code is wrong" in wrong and "caused by" not in wrong
    assert "account-row" not in wrong and f'id="account-{account.pk}"' not in wrong

    right = htmx_post(admin_client, url, {"code": "22222"})
    assert "<dialog" not in right
    assert f'<tr id="account-{account.pk}" hx-swap-oob="true">' in right
    assert "Authenticated" in right and "★ Premium" in right
    assert TelegramAccount.objects.get(pk=account.pk).is_premium


def test_two_step_password_dialog(admin_client, world):
    account = add(admin_client, GUARDED)

    after_code = htmx_post(admin_client, reverse("accounts:code", args=[account.pk]), {"code": "33333"})
    assert "Two-step verification" in after_code
    assert "Waiting for 2FA password" in after_code  # the row, out of band

    url = reverse("accounts:password", args=[account.pk])
    wrong = htmx_post(admin_client, url, {"password": "nope"})
    assert "<dialog" in wrong and 'class="field-error"' in wrong

    right = htmx_post(admin_client, url, {"password": "correct horse"})
    assert "<dialog" not in right and "Authenticated" in right
    assert TelegramAccount.objects.get(pk=account.pk).auth_state == AuthState.AUTHENTICATED


def test_send_code_refused_shows_a_notice(admin_client, world):
    account = TelegramAccount.objects.create(phone=READER, auth_state=AuthState.AUTHENTICATED)

    html = htmx_post(admin_client, reverse("accounts:send-code", args=[account.pk]))

    assert "No login code sent" in html
    assert "already logged in" in html


def test_refresh_chats_swaps_the_row(admin_client, world):
    account = add(admin_client, READER)
    htmx_post(admin_client, reverse("accounts:code", args=[account.pk]), {"code": "12345"})

    html = htmx_post(admin_client, reverse("accounts:refresh-chats", args=[account.pk]))

    assert html.lstrip().startswith(f'<tr id="account-{account.pk}"')
    assert "Found 3 chats." in html
    assert account.chat_links.count() == 3


def test_refresh_chats_of_an_expired_session_shows_why(admin_client, world):
    account = add(admin_client, READER)
    htmx_post(admin_client, reverse("accounts:code", args=[account.pk]), {"code": "12345"})
    world.sessions_revoke(READER)

    html = htmx_post(admin_client, reverse("accounts:refresh-chats", args=[account.pk]))

    assert "Session expired" in html
    assert "Log in" in html
    assert "ended (logged out elsewhere); log in again" in html and "caused by" not in html
    assert TelegramAccount.objects.get(pk=account.pk).auth_state == AuthState.EXPIRED


def test_delete_removes_the_row(admin_client):
    account = TelegramAccount.objects.create(phone=READER)

    assert htmx_post(admin_client, reverse("accounts:delete", args=[account.pk])) == ""
    assert not TelegramAccount.objects.exists()


def test_without_htmx_the_steps_are_whole_pages(admin_client, world):
    added = admin_client.post(reverse("accounts:add"), {"phone": READER})
    account = TelegramAccount.objects.get(phone=READER)
    assert added.status_code == 302
    assert added.url == reverse("accounts:code", args=[account.pk])

    page = admin_client.get(added.url).content.decode()
    assert "<h1>Accounts</h1>" in page and "Enter the login code" in page

    done = admin_client.post(added.url, {"code": "12345"})
    assert done.status_code == 302 and done.url == reverse("accounts:list")

    refreshed = admin_client.post(reverse("accounts:refresh-chats", args=[account.pk]), follow=True)
    assert "Found 3 chats." in refreshed.content.decode()
