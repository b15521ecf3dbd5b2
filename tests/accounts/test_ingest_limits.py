"""An account's ingestion hours and bandwidth cap, set from the Accounts page and the API: human sizes in, a clear
error per field out, and the page saying why ingestion waits."""

from datetime import UTC, datetime

import pytest
from django.urls import reverse

from accounts.models import TelegramAccount
from tests.support.pages import htmx_post

pytestmark = pytest.mark.django_db

NOON = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)


@pytest.fixture
def account():
    return TelegramAccount.objects.create(phone="+15550000001", display_name="Reader A", auth_state="authenticated")


def limits(**changes) -> dict:
    return {
        "ingest_start_hour": 22,
        "ingest_end_hour": 6,
        "ingest_timezone": "Europe/Berlin",
        "ingest_bandwidth": "2 MB/s",
        **changes,
    }


def test_the_api_takes_hours_and_a_human_cap(api, account):
    response = api.post(f"/api/accounts/{account.pk}/ingest-limits/", limits(), format="json")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["ingest_start_hour"], body["ingest_end_hour"], body["ingest_timezone"]) == (22, 6, "Europe/Berlin")
    assert (body["ingest_bytes_per_second"], body["ingest_bandwidth"]) == (2_000_000, "2 MB/s")
    assert body["ingest_hours"] == "22:00–06:00 (Europe/Berlin)"

    cleared = api.post(f"/api/accounts/{account.pk}/ingest-limits/", limits(ingest_bandwidth=None), format="json")
    assert (cleared.json()["ingest_bytes_per_second"], cleared.json()["ingest_bandwidth"]) == (None, "no cap")


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"ingest_bandwidth": "fast"}, "ingest_bandwidth", 'write it as "2 MB/s"'),
        ({"ingest_bandwidth": "0"}, "ingest_bandwidth", "less than one byte"),
        ({"ingest_timezone": "Mars/Olympus"}, "ingest_timezone", "not an IANA time zone"),
        ({"ingest_start_hour": 9, "ingest_end_hour": 9}, "ingest_end_hour", "for all day choose 00:00–24:00"),
        ({"ingest_start_hour": 24}, "ingest_start_hour", "from 0 to 23"),
        ({"ingest_end_hour": 25}, "ingest_end_hour", "from 1 to 24"),
        ({"ingest_start_hour": "nine"}, "ingest_start_hour", "valid integer"),
    ],
)
def test_bad_input_is_a_400_that_says_what_to_write(api, account, changes, field, words):
    response = api.post(f"/api/accounts/{account.pk}/ingest-limits/", limits(**changes), format="json")

    assert response.status_code == 400
    body = response.json()
    assert words in body["message"] or words in str(body.get("errors", body)), body
    account.refresh_from_db()
    assert (account.ingest_start_hour, account.ingest_end_hour, account.ingest_bytes_per_second) == (0, 24, None)


def test_the_schema_documents_the_action(api):
    schema = api.get("/api/schema/", {"format": "json"}).json()

    operation = schema["paths"]["/api/accounts/{id}/ingest-limits/"]["post"]
    assert "bandwidth" in operation["summary"]
    assert "400" in operation["responses"]


def test_the_page_dialog_keeps_what_was_typed_beside_its_error(operator, account):
    url = reverse("accounts:ingest-limits", args=[account.pk])

    html = htmx_post(operator, url, limits(ingest_bandwidth="lots", ingest_timezone="Europe/Berlin"))

    assert "Ingestion hours and bandwidth" in html and 'value="lots"' in html
    assert "is not a size" in html and 'value="Europe/Berlin"' in html
    assert TelegramAccount.objects.get(pk=account.pk).ingest_bytes_per_second is None


def test_the_page_saves_and_the_row_says_why_ingestion_waits(operator, account, at):
    at(NOON)  # 13:00 in Berlin: outside 22:00–06:00
    url = reverse("accounts:ingest-limits", args=[account.pk])

    html = htmx_post(operator, url, limits(ingest_bandwidth="500 KB/s"))

    assert "hx-swap-oob" in html and "Ingests 22:00–06:00 (Europe/Berlin) · bandwidth 500 KB/s" in html
    assert "Waiting for its ingestion hours" in html and "22:00" in html
    page = operator.get(reverse("accounts:list")).content.decode()
    assert "Waiting for its ingestion hours" in page
    account.refresh_from_db()
    assert (account.ingest_start_hour, account.ingest_end_hour, account.ingest_bytes_per_second) == (22, 6, 500_000)


def test_a_viewer_sees_the_hours_but_cannot_change_them(client, django_user_model, account):
    client.force_login(django_user_model.objects.create_user(username="viewer", password="x"))

    page = client.get(reverse("accounts:list")).content.decode()
    response = client.post(reverse("accounts:ingest-limits", args=[account.pk]), limits())

    assert "Ingests all day · bandwidth no cap" in page
    assert response.status_code == 403
    assert TelegramAccount.objects.get(pk=account.pk).ingest_start_hour == 0
