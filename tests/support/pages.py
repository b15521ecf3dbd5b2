"""Pages and API in tests: the reminders' API body, compose form, HTMX posts and wizard step shown; the Packages
page's search results."""

import re

from django.urls import reverse

from accounts.models import Chat
from tests.support.reminders import (
    KL,
    account,
    group_id,
)


def body(**changes) -> dict:
    data = {
        "account": account().pk,
        "name": "Black Friday",
        "timezone": KL,
        "window_start_hour": 9,
        "window_end_hour": 18,
        "schedule": {"crontab": "0 9 * * 1-5"},
        "parts": [{"text": "Big sale today"}],
        "targets": [{"chat": group_id(0), "topic": None}, {"chat": group_id(1)}],
    }
    return data | changes


HTMX = {"HTTP_HX_REQUEST": "true"}


def compose(**changes) -> dict:
    """What the compose form posts when everything is filled in."""
    data = {
        "step": "message",
        "name": "Weekly promo",
        "account": str(account().pk),
        "part": ["0"],
        "part-0-kind": "text",
        "part-0-text": "Big sale today",
        "targets": [str(pk) for pk in chat_pks()],
        "timezone": "UTC",
        "window_start_hour": "9",
        "window_end_hour": "18",
        "schedule": "crontab",
        "crontab": "0 9 * * 1-5",
        "enabled": "on",
        "link_preview": "on",  # checked on a new reminder's page
    }
    return data | changes


def htmx_post(client, url: str, data: dict | None = None, **extra) -> str:
    response = client.post(url, data or {}, **HTMX, **extra)
    assert response.status_code == 200, response.content.decode()[:2000]
    return response.content.decode().strip()


def current_step(html: str) -> str:
    return re.search(r'name="step" value="(\w+)"', html).group(1)


def chat_pks(count: int | None = None) -> list[int]:
    pks = list(Chat.objects.filter(account_links__account=account()).order_by("title").values_list("pk", flat=True))
    return pks[:count] if count is not None else pks


def package_search_results(client, query: str) -> str:
    """The Packages page's results for `query`, as its search box gets them (htmx)."""
    response = client.get(reverse("packages:list"), {"q": query}, **HTMX)
    assert response.status_code == 200
    return response.content.decode()
