"""Operator login, the layout and the dashboard."""

import pytest
from django.urls import reverse

from accounts.models import AccountChat, AuthState, Chat, TelegramAccount

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    ["/", "/accounts/", "/accounts/add/", "/accounts/1/code/", "/accounts/1/password/"],
)
def test_pages_need_a_logged_in_operator(client, url):
    response = client.get(url)

    assert response.status_code == 302
    assert response.url == f"{reverse('login')}?next={url}"


def test_operator_logs_in_and_out(client, django_user_model):
    django_user_model.objects.create_user(username="operator", password="s3cret-pass")

    wrong = client.post(reverse("login"), {"username": "operator", "password": "nope"})
    assert wrong.status_code == 200
    assert "correct username and password" in wrong.content.decode()

    right = client.post(reverse("login"), {"username": "operator", "password": "s3cret-pass"})
    assert right.status_code == 302 and right.url == reverse("dashboard")
    assert client.get(reverse("login")).url == reverse("dashboard")  # already logged in

    out = client.post(reverse("logout"))
    assert out.status_code == 302 and out.url == reverse("login")
    assert client.get("/").status_code == 302


def test_navigation_links_every_section(admin_client):
    html = admin_client.get(reverse("dashboard")).content.decode()

    for name in ("accounts:list", "ingestion:channels", "ingestion:runs", "packages:list", "ingestion:skipped"):
        assert f'href="{reverse(name)}"' in html
    assert 'href="/flower/"' in html
    assert 'hx-headers=\'{"X-CSRFToken"' in html


def test_dashboard_shows_real_counts(admin_client):
    reader = TelegramAccount.objects.create(phone="+15550000001", auth_state=AuthState.AUTHENTICATED)
    TelegramAccount.objects.create(phone="+15550000002", auth_state=AuthState.AUTHENTICATED, is_premium=True)
    TelegramAccount.objects.create(phone="+15550000003", auth_state=AuthState.EXPIRED, last_error="Session revoked")
    for telegram_id in (1001, 1002):
        chat = Chat.objects.create(telegram_id=telegram_id, title=f"Chat {telegram_id}", type="channel")
        AccountChat.objects.create(account=reader, chat=chat)
    Chat.objects.create(telegram_id=1003, title="Left behind", type="channel")  # no account sees it

    response = admin_client.get(reverse("dashboard"))

    summary = response.context["summary"]
    assert summary.accounts_total == 3
    assert summary.accounts_authenticated == 2
    assert summary.accounts_premium == 1
    assert summary.chats_known == 2
    assert {item.state: item.count for item in summary.accounts_by_state}[AuthState.EXPIRED] == 1
    html = response.content.decode()
    assert "Needs attention" in html and "Session revoked" in html


def test_dashboard_without_accounts_invites_to_add_one(admin_client):
    html = admin_client.get(reverse("dashboard")).content.decode()

    assert "No Telegram accounts yet" in html
    assert reverse("accounts:add") in html
