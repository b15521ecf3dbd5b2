"""A channel's rules through the API: read, changed, tried on the channel; bad input is a 400 that says why."""

import pytest

from accounts.models import AccountChat
from ingestion.models import Channel
from tests.support.ingestion import ARCHIVES, SOURCE, world

pytestmark = pytest.mark.django_db


@pytest.fixture
def source_pk(ingest_world) -> int:
    ingest_world(world(messages=ARCHIVES))
    return Channel.objects.get(chat__telegram_id=SOURCE).pk


def test_rules_are_read_and_changed_with_human_sizes(api, source_pk):
    url = f"/api/channels/{source_pk}/"
    assert api.get(url).json()["start_from"] == "history"

    response = api.patch(
        url,
        {
            "take_kinds": ["zip", "7z"],
            "min_bytes": "1 MB",
            "max_bytes": 500_000_000,
            "name_pattern": "dragon",
            "start_from": "message",
            "start_message_link": "https://t.me/c/1001/20",
            "category": "Dragons",
        },
        format="json",
    )

    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["take_kinds"], body["min_bytes"], body["max_bytes"]) == (["7z", "zip"], 1_000_000, 500_000_000)
    assert (body["start_from"], body["start_message_id"], body["category"]) == ("message", 20, "Dragons")


@pytest.mark.parametrize(
    ("changes", "field", "says"),
    [
        ({"name_pattern": "(unclosed"}, "name_pattern", "not a valid regular expression"),
        ({"max_bytes": "five hundred"}, "max_bytes", "is not a size"),
        ({"take_kinds": ["tar"]}, "take_kinds", "not a valid choice"),
        ({"start_from": "message", "start_message_link": "https://example.com/1"}, "start_message_link", "t.me"),
        ({"start_from": "date", "start_date": "tomorrow"}, "start_date", "format"),
    ],
)
def test_bad_rules_are_a_400_that_names_the_field_and_changes_nothing(api, source_pk, changes, field, says):
    url = f"/api/channels/{source_pk}/"
    before = api.get(url).json()

    response = api.patch(url, {**changes, "category": "changed?"}, format="json")

    assert response.status_code == 400
    body = response.json()
    assert says in body["message"] and field in body["errors"], body
    assert api.get(url).json() == before


def test_the_preview_tries_rules_without_saving_them(api, source_pk):
    response = api.post(f"/api/channels/{source_pk}/rules-preview/", {"take_kinds": ["model"]}, format="json")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert [(item["file_name"], item["taken"]) for item in body["sets"]] == [
        ("bust.stl", True),
        ("big.7z.001", False),
        ("dragon.zip", False),
    ]
    assert body["taken"] == 1 and body["account"]
    assert Channel.objects.get(pk=source_pk).take_kinds == []


def test_the_history_count_says_sets_and_bytes(api, source_pk):
    response = api.post(f"/api/channels/{source_pk}/history-count/", {}, format="json")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["sets"] == body["taken_sets"] == 3 and body["bytes"] == body["taken_bytes"] > 0


def test_a_preview_nobody_can_read_says_so(api, source_pk):
    AccountChat.objects.filter(chat__telegram_id=SOURCE).delete()

    response = api.post(f"/api/channels/{source_pk}/rules-preview/", {}, format="json")

    assert response.status_code == 409
    assert "No logged-in account is in Models A" in response.json()["message"]
