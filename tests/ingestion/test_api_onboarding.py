"""The onboarding API: preview and join by link, leave, create the destination, join the sources; bad input is a
400 with a message a person can act on; viewers change nothing; the schema documents every endpoint."""

import pytest
from rest_framework.test import APIClient

from accounts.models import TelegramAccount
from ingestion.models import Channel
from tests.support.onboarding import FRESH, MODELS_A, NEWCOMER, READER, SHY, WRITER, onboarding_world

pytestmark = pytest.mark.django_db(transaction=True)


def pk(phone: str) -> int:
    return TelegramAccount.objects.get(phone=phone).pk


def test_preview_then_join_by_link(api, ingest_world):
    world = ingest_world(onboarding_world())

    preview = api.post("/api/channels/onboarding/preview/", {"account": pk(NEWCOMER), "link": "t.me/fresh_finds"})
    joined = api.post("/api/channels/onboarding/join/", {"account": pk(NEWCOMER), "link": "@fresh_finds"})

    assert preview.status_code == 200, preview.json()
    assert preview.json() == {
        "title": "Fresh finds",
        "type": "channel",
        "members_count": 9,
        "forum": False,
        "already_member": False,
        "request_needed": False,
        "username": "fresh_finds",
    }
    assert joined.status_code == 200, joined.json()
    channel = Channel.objects.get(chat__telegram_id=FRESH)
    assert joined.json() == {
        "title": "Fresh finds",
        "status": "joined",
        "status_label": "Joined",
        "message": "",
        "channel": channel.pk,
    }
    assert world.membership(FRESH, NEWCOMER) == "member"
    assert api.get(f"/api/channels/{channel.pk}/").json()["readers"] == [pk(NEWCOMER)]


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"link": "https://t.me/+OldInvite001"}, "link: This invite link has expired or was revoked"),
        ({"link": "t.me/+abc"}, "link: 't.me/+abc' is not a whole invite link"),
        ({"link": ""}, "link: Paste a @username or a t.me link"),
        ({}, "link: This field is required."),
        ({"account": 999999, "link": "@fresh_finds"}, "account: Invalid pk"),
    ],
)
def test_bad_input_is_a_400_that_says_what_to_fix(api, ingest_world, body, words):
    ingest_world(onboarding_world())

    for endpoint in ("preview", "join"):
        response = api.post(f"/api/channels/onboarding/{endpoint}/", {"account": pk(NEWCOMER)} | body, format="json")
        assert response.status_code == 400, response.json()
        assert response.json()["message"].startswith(words)


def test_a_flood_wait_is_a_429_with_retry_after(api, ingest_world):
    data = onboarding_world()
    data["faults"] = [{"op": "join", "error": "flood_wait", "seconds": 90}]
    ingest_world(data)

    response = api.post("/api/channels/onboarding/join/", {"account": pk(NEWCOMER), "link": "@fresh_finds"})

    assert response.status_code == 429
    assert response["Retry-After"] == "90" and "wait 90 s" in response.json()["message"]


def test_leave_a_channel(api, ingest_world):
    world = ingest_world(onboarding_world())
    channel = Channel.objects.get(chat__telegram_id=MODELS_A)

    response = api.post(f"/api/channels/{channel.pk}/leave/", {"account": pk(READER)})
    again = api.post(f"/api/channels/{channel.pk}/leave/", {"account": pk(READER)})

    assert response.status_code == 200
    assert response.json()["left_on_telegram"] is True and response.json()["channel"]["readers"] == []
    assert world.membership(MODELS_A, READER) is None
    assert again.status_code == 400 and again.json()["message"] == "account: Reader is not in Models A."


def test_create_the_destination_once_per_idempotency_key(api, ingest_world):
    world = ingest_world(onboarding_world())
    body = {"account": pk(READER), "title": "Stash archive", "writers": [pk(WRITER), pk(SHY)]}

    first = api.post("/api/channels/onboarding/create-destination/", body, format="json", HTTP_IDEMPOTENCY_KEY="k1")
    retry = api.post("/api/channels/onboarding/create-destination/", body, format="json", HTTP_IDEMPOTENCY_KEY="k1")

    assert first.status_code == 201, first.json()
    data = first.json()
    assert data["channel"]["title"] == "Stash archive" and data["channel"]["is_destination"]
    assert sorted(data["writers"]) == sorted([pk(READER), pk(WRITER)])
    assert [(row["account"], row["added"]) for row in data["added"]] == [(pk(WRITER), True), (pk(SHY), False)]
    assert "privacy settings" in data["added"][1]["message"]
    assert retry.json() == data and retry["Idempotent-Replayed"] == "true"
    created = [chat for chat in world.chats() if chat["title"] == "Stash archive"]
    assert len(created) == 1, "a retried create makes no second channel"
    untitled = api.post("/api/channels/onboarding/create-destination/", {"account": pk(READER), "title": ""})
    assert untitled.status_code == 400 and untitled.json()["message"] == "title: Give the new channel a title."


def test_join_the_sources(api, ingest_world):
    ingest_world(onboarding_world())

    response = api.post("/api/channels/onboarding/join-sources/", {"account": pk(NEWCOMER)})

    assert response.status_code == 200
    assert [(row["title"], row["status"]) for row in response.json()] == [
        ("Models A", "joined"),
        ("Prints club", "failed"),
    ]


def test_viewers_cannot_join_leave_or_create(ingest_world, django_user_model):
    world = ingest_world(onboarding_world())
    viewer = APIClient()
    viewer.force_authenticate(django_user_model.objects.create_user("viewer", password="v1ew-pass"))
    channel = Channel.objects.get(chat__telegram_id=MODELS_A)

    for path, body in (
        ("/api/channels/onboarding/preview/", {"account": pk(NEWCOMER), "link": "@fresh_finds"}),
        ("/api/channels/onboarding/join/", {"account": pk(NEWCOMER), "link": "@fresh_finds"}),
        ("/api/channels/onboarding/join-sources/", {"account": pk(NEWCOMER)}),
        ("/api/channels/onboarding/create-destination/", {"account": pk(READER), "title": "X"}),
        (f"/api/channels/{channel.pk}/leave/", {"account": pk(READER)}),
    ):
        response = viewer.post(path, body)
        assert response.status_code == 403, path
        assert "Viewers can look but not change anything" in response.json()["message"]
    assert world.membership(FRESH, NEWCOMER) is None and world.membership(MODELS_A, READER) == "member"


def test_the_schema_documents_the_onboarding_endpoints(api):
    schema = api.get("/api/schema/", {"format": "json"}).json()

    for path in (
        "/api/channels/onboarding/preview/",
        "/api/channels/onboarding/join/",
        "/api/channels/onboarding/join-sources/",
        "/api/channels/onboarding/create-destination/",
        "/api/channels/{id}/leave/",
    ):
        operation = schema["paths"][path]["post"]
        assert operation["summary"] and "requestBody" in operation, path
