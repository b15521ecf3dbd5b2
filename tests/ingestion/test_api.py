"""The channels, topics, destination, trigger, runs and skipped-packages API on a sandbox world."""

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from accounts.models import AuthState, TelegramAccount
from core.models import RunStatus
from ingestion.models import AccountChannelMap, Channel, IngestionRun, MapRole, SkippedPackage, TopicProgress
from tests.support.ingestion import DESTINATION, READER, SOURCE, WRITER, run_cycle, world

pytestmark = pytest.mark.django_db

FORUM = 1500
SECOND_DESTINATION = 9100
MORE_CHATS = [
    {
        "id": FORUM,
        "title": "Makers forum",
        "type": "supergroup",
        "forum": True,
        "role": "source",
        "members": [READER],
        "topics": [{"id": 1, "title": "General"}, {"id": 42, "title": "Dragons"}],
        "messages": [
            {"id": 5, "topic": 42, "document": {"name": "wyrm.zip", "archive": [{"path": "wyrm.stl", "size": 100}]}}
        ],
    },
    {
        "id": SECOND_DESTINATION,
        "title": "Archive Two",
        "type": "channel",
        "members": [WRITER, READER],
        "admins": [WRITER],
        "messages": [],
    },
]
ARCHIVES = [{"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}}]


@pytest.fixture
def setup(ingest_world):
    ingest_world(world(messages=ARCHIVES, more_chats=MORE_CHATS))


def channel_id(api, telegram_id: int) -> int:
    channels = api.get("/api/channels/").json()["results"]
    return next(item["id"] for item in channels if item["telegram_id"] == telegram_id)


def account_id(phone: str) -> int:
    return TelegramAccount.objects.get(phone=phone).pk


def test_anonymous_clients_are_refused():
    for url in ["/api/channels/", "/api/topics/", "/api/destination/", "/api/ingestion-runs/", "/api/packages/"]:
        response = APIClient().get(url)
        assert response.status_code in (401, 403), url
        assert "credentials" in response.json()["message"]


# Channels ---------------------------------------------------------------------------------------------------


def test_channels_list_every_channel_the_accounts_are_in(api, setup):
    body = api.get("/api/channels/").json()

    by_title = {item["title"]: item for item in body["results"]}
    assert set(by_title) == {"Models A", "Makers forum", "Archive", "Archive Two"}
    assert body["count"] == 4
    source = by_title["Models A"]
    assert source["is_active"] and not source["is_destination"]
    assert source["readers"] == [account_id(READER)] and source["writers"] == []
    assert by_title["Archive"]["is_destination"] and by_title["Archive"]["writers"] == [account_id(WRITER)]
    assert by_title["Makers forum"]["is_forum"] and by_title["Makers forum"]["type"] == "supergroup"
    assert Channel.objects.filter(chat__telegram_id=SECOND_DESTINATION).exists()


def test_channels_filter_by_active(api, setup):
    titles = {item["title"] for item in api.get("/api/channels/?is_active=false").json()["results"]}

    assert titles == {"Archive", "Archive Two"}


def test_patch_a_channel(api, setup):
    pk = channel_id(api, SECOND_DESTINATION)

    response = api.patch(
        f"/api/channels/{pk}/", {"is_active": True, "category": " Terrain ", "expiration_days": 0}, format="json"
    )

    assert response.status_code == 200, response.json()
    assert (response.json()["is_active"], response.json()["category"], response.json()["expiration_days"]) == (
        True,
        "Terrain",
        0,
    )
    cleared = api.patch(f"/api/channels/{pk}/", {"expiration_days": None}, format="json").json()
    assert cleared["expiration_days"] is None and cleared["category"] == "Terrain"


def test_a_negative_retention_is_a_400_naming_the_field(api, setup):
    pk = channel_id(api, SOURCE)

    response = api.patch(f"/api/channels/{pk}/", {"expiration_days": -2}, format="json")

    assert response.status_code == 400
    assert response.json()["message"].startswith("expiration_days: Use empty (keep raw files)")
    assert Channel.objects.get(pk=pk).expiration_days is None


@pytest.mark.parametrize("days", [36501, 9999999, 99999999999, 10**30])
def test_a_retention_beyond_a_century_is_a_400_naming_the_field(api, setup, days):
    pk = channel_id(api, SOURCE)

    response = api.patch(f"/api/channels/{pk}/", {"expiration_days": days}, format="json")

    assert response.status_code == 400, response.content
    assert response.json()["message"].startswith("expiration_days:"), response.json()
    assert Channel.objects.get(pk=pk).expiration_days is None


def test_the_destination_cannot_become_a_source(api, setup):
    pk = channel_id(api, DESTINATION)

    response = api.patch(f"/api/channels/{pk}/", {"is_active": True}, format="json")

    assert response.status_code == 400
    assert response.json()["message"] == "is_active: The destination channel cannot also be a source."


def test_a_channel_cannot_be_replaced_wholesale(api, setup):
    pk = channel_id(api, SOURCE)

    assert api.put(f"/api/channels/{pk}/", {"is_active": False}, format="json").status_code == 405


# Topics -----------------------------------------------------------------------------------------------------


def test_topics_list_by_channel_and_switch_fetching(api, setup):
    run_cycle()
    forum = channel_id(api, FORUM)

    body = api.get(f"/api/topics/?channel={forum}").json()

    topics = {item["title"]: item for item in body["results"]}
    assert set(topics) == {"General", "Dragons"}
    dragons = topics["Dragons"]
    assert (dragons["topic_id"], dragons["channel"], dragons["account"]) == (42, forum, account_id(READER))
    assert dragons["fetch_enabled"] and dragons["last_processed_message_id"] == 5
    assert api.get(f"/api/topics/?channel={channel_id(api, SOURCE)}").json()["count"] == 0

    response = api.patch(f"/api/topics/{dragons['id']}/", {"fetch_enabled": False}, format="json")
    assert response.status_code == 200 and response.json()["fetch_enabled"] is False
    assert not TopicProgress.objects.get(pk=dragons["id"]).fetch_enabled

    missing = api.patch(f"/api/topics/{dragons['id']}/", {}, format="json")
    assert missing.status_code == 400 and missing.json()["message"].startswith("fetch_enabled:")


# Destination ------------------------------------------------------------------------------------------------


def test_get_the_destination(api, setup):
    body = api.get("/api/destination/").json()

    assert body["channel"]["telegram_id"] == DESTINATION
    assert body["writers"] == [account_id(WRITER)]


def test_no_destination_is_null(api, setup):
    Channel.objects.update(is_destination=False)

    assert api.get("/api/destination/").json() == {"channel": None, "writers": []}


def test_put_a_new_destination_with_its_writers(api, setup):
    second = channel_id(api, SECOND_DESTINATION)

    response = api.put("/api/destination/", {"channel": second, "writers": [account_id(WRITER)]}, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["channel"]["id"] == second and response.json()["writers"] == [account_id(WRITER)]
    assert Channel.objects.get(is_destination=True).pk == second


def test_post_a_destination_defaults_to_every_account_that_can_post(api, setup):
    second = channel_id(api, SECOND_DESTINATION)

    response = api.post("/api/destination/", {"channel": second}, format="json")

    assert response.status_code == 200
    assert response.json()["writers"] == [account_id(WRITER)], "READER is a member but cannot post"


def test_a_writer_that_cannot_post_is_a_400_and_changes_nothing(api, setup):
    second = channel_id(api, SECOND_DESTINATION)

    response = api.put("/api/destination/", {"channel": second, "writers": [account_id(READER)]}, format="json")

    assert response.status_code == 400
    assert response.json()["message"] == "writers: Reader A cannot post in Archive Two."
    assert Channel.objects.get(is_destination=True).chat.telegram_id == DESTINATION
    assert not AccountChannelMap.objects.filter(channel_id=second, role=MapRole.WRITER).exists()


def test_an_unknown_destination_channel_is_a_400(api, setup):
    response = api.put("/api/destination/", {"channel": 999999}, format="json")

    assert response.status_code == 400 and response.json()["message"].startswith("channel:")


# Trigger and runs -------------------------------------------------------------------------------------------


def test_trigger_queues_a_run_per_reading_account(api, setup):
    response = api.post("/api/ingestion/trigger/", {}, format="json")

    assert response.status_code == 200
    body = response.json()
    assert body["message"] == "Queued 1 run."
    assert [(run["account"], run["status"], run["trigger"]) for run in body["runs"]] == [
        (account_id(READER), "queued", "manual")
    ]
    assert api.post("/api/ingestion/trigger/", {}, format="json").json() == {"message": "Queued 0 runs.", "runs": []}


def test_trigger_for_one_account_returns_its_open_run(api, setup):
    first = api.post("/api/ingestion/trigger/", {"account": account_id(WRITER)}, format="json").json()
    again = api.post("/api/ingestion/trigger/", {"account": account_id(WRITER)}, format="json").json()

    run = IngestionRun.objects.get()
    assert first["message"] == f"Queued run {run.pk}." and first["runs"][0]["id"] == run.pk
    assert again["message"] == f"Run {run.pk} is already waiting." and again["runs"][0]["id"] == run.pk


def test_trigger_for_an_account_that_is_not_logged_in_is_a_400(api, setup):
    TelegramAccount.objects.filter(phone=READER).update(auth_state=AuthState.EXPIRED)

    response = api.post("/api/ingestion/trigger/", {"account": account_id(READER)}, format="json")

    assert response.status_code == 400
    assert "not an active, logged-in account" in response.json()["message"]
    assert not IngestionRun.objects.exists()


def test_runs_list_filter_and_retrieve(api, setup):
    done = run_cycle()
    failed = IngestionRun.objects.create(account=done.account, status=RunStatus.FAILED, error="boom")

    body = api.get("/api/ingestion-runs/").json()
    assert [run["id"] for run in body["results"]] == [failed.pk, done.pk]
    assert [run["id"] for run in api.get("/api/ingestion-runs/?status=success").json()["results"]] == [done.pk]

    one = api.get(f"/api/ingestion-runs/{done.pk}/").json()
    assert (one["status"], one["ingested"], one["archives_found"]) == ("success", 2, 2)
    assert one["bytes_downloaded"] > 0 and one["bytes_uploaded"] > 0 and one["finished_at"]

    bad = api.get("/api/ingestion-runs/?status=done")
    assert bad.status_code == 400 and bad.json()["message"].startswith("status:")


# Skipped packages -------------------------------------------------------------------------------------------


@pytest.fixture
def too_large(setup, settings):
    settings.INGEST_MAX_PACKAGE_BYTES = 100
    run_cycle()
    return SkippedPackage.objects.get(file_name="dragon.zip")


def test_skipped_packages_list_and_filter(api, too_large):
    body = api.get("/api/skipped-packages/").json()

    item = next(item for item in body["results"] if item["id"] == too_large.pk)
    assert item["reason"] == "SIZE_LIMIT" and item["reason_label"] == "Too large"
    assert (item["file_name"], item["attempt_count"], item["message_id"]) == ("dragon.zip", 1, 11)
    assert item["channel"] == too_large.channel_id and item["topic_id"] is None
    assert item["file_size"] > 100 and "the largest package the console takes" in item["error_message"]
    assert api.get("/api/skipped-packages/?reason=MISSING_PART").json()["count"] == 0
    bad = api.get("/api/skipped-packages/?reason=NOPE")
    assert bad.status_code == 400 and bad.json()["message"].startswith("reason:")


def test_retry_one_skipped_package(api, too_large, settings):
    response = api.post(f"/api/skipped-packages/{too_large.pk}/retry/")

    assert response.status_code == 200
    assert response.json()["retried"] == 1 and "dragon.zip is queued for retry" in response.json()["message"]
    assert not SkippedPackage.objects.filter(pk=too_large.pk).exists()
    assert api.post(f"/api/skipped-packages/{too_large.pk}/retry/").status_code == 404
    settings.INGEST_MAX_PACKAGE_BYTES = 10**9
    assert run_cycle().ingested == 1


def test_retry_all_of_one_reason(api, too_large):
    none = api.post("/api/skipped-packages/retry-all/", {"reason": "MISSING_PART"}, format="json").json()
    assert none == {"message": "0 skipped packages queued for retry.", "retried": 0}

    some = api.post("/api/skipped-packages/retry-all/", {"reason": "SIZE_LIMIT"}, format="json").json()
    assert some["retried"] == 2  # dragon.zip here and wyrm.zip in the forum
    assert not SkippedPackage.objects.exists()


def test_retry_all_with_an_unknown_reason_is_a_400_and_retries_nothing(api, too_large):
    response = api.post("/api/skipped-packages/retry-all/", {"reason": "TOO_BIG"}, format="json")

    assert response.status_code == 400
    assert response.json()["message"].startswith("reason: Unknown reason 'TOO_BIG'; use one of DOWNLOAD_FAILED")
    assert SkippedPackage.objects.exists()


# Schema -----------------------------------------------------------------------------------------------------


def test_the_openapi_schema_is_valid_and_has_the_ingestion_endpoints(tmp_path):
    schema = tmp_path / "schema.yaml"

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(schema))

    text = schema.read_text()
    for path in [
        "/api/channels/{id}/:",
        "/api/topics/{id}/:",
        "/api/destination/:",
        "/api/ingestion/trigger/:",
        "/api/ingestion-runs/{id}/:",
        "/api/packages/{id}/:",
        "/api/skipped-packages/{id}/retry/:",
        "/api/skipped-packages/retry-all/:",
    ]:
        assert f"  {path}" in text, path


def test_readers_are_linked_and_unlinked_through_the_api(admin_client):
    from accounts.models import AccountChat, AuthState, Chat, TelegramAccount
    from ingestion.models import Channel

    account = TelegramAccount.objects.create(phone="+15550000077", auth_state=AuthState.AUTHENTICATED)
    chat = Chat.objects.create(telegram_id=88_001, title="Linkable", type="channel")
    stranger = Chat.objects.create(telegram_id=88_002, title="Not a member", type="channel")
    AccountChat.objects.create(account=account, chat=chat, access_hash=1)
    channel, elsewhere = Channel.objects.create(chat=chat), Channel.objects.create(chat=stranger)

    linked = admin_client.post(f"/api/channels/{channel.pk}/readers/", {"account": account.pk})
    refused = admin_client.post(f"/api/channels/{elsewhere.pk}/readers/", {"account": account.pk})
    unknown = admin_client.post(f"/api/channels/{channel.pk}/readers/", {"account": 999_999})

    assert linked.status_code == 200 and linked.json()["readers"] == [account.pk]
    assert refused.status_code == 400 and "is not in Not a member" in refused.json()["message"]
    assert unknown.status_code == 400 and unknown.json()["message"].startswith("account:")
    removed = admin_client.post(f"/api/channels/{channel.pk}/readers/remove/", {"account": account.pk})
    assert removed.status_code == 200 and removed.json()["readers"] == []
