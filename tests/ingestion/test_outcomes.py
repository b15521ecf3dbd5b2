"""What an ingestion run came to, said in the one vocabulary (core.outcomes) on its page, the Runs list and the
API: a cycle that ingested nothing did nothing (and says why), it is not "Success"; a cycle cut short before it
did anything (its account's session busy) did nothing, it is not "Partial"; a run whose account another run
holds waits; a skipped set still makes a cycle partial."""

import pytest
from django.urls import reverse

from accounts.models import TelegramAccount
from core.leases import SESSION
from core.locks import ACCOUNT
from core.outcomes import Outcome
from ingestion.models import RUN_OUTCOME_FILTERS, IngestionRun
from tests.support.ingestion import READER, held_elsewhere, run_cycle, world

pytestmark = pytest.mark.django_db

MESSAGES = [
    {"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}},
    {"id": 13, "document": {"name": "huge.zip", "archive": [{"path": "huge.stl", "size": 60_000}]}},
]


@pytest.fixture(autouse=True)
def small_limit(settings):
    settings.INGEST_MAX_PACKAGE_BYTES = 30_000  # huge.zip is skipped as too large
    settings.TELEGRAM_SESSION_WAIT_SECONDS = 0


def agrees_with_its_filter(run: IngestionRun) -> bool:
    """The Runs page's pills filter by outcome in SQL: each run is under exactly the pill its badge names."""
    under = [key for key, where in RUN_OUTCOME_FILTERS.items() if IngestionRun.objects.filter(where, pk=run.pk)]
    return under == [run.outcome.key]


def test_each_ending_of_a_cycle_says_what_it_came_to(ingest_world):
    ingest_world(world(messages=MESSAGES))

    first = run_cycle()  # dragon.zip ingested, huge.zip skipped
    again = run_cycle()  # nothing new since
    account = TelegramAccount.objects.get(phone=READER)
    with held_elsewhere(SESSION, account.phone):
        busy = run_cycle()
    with held_elsewhere(ACCOUNT, str(account.pk)):
        locked = run_cycle()

    assert (first.outcome.key, first.outcome.why) == (Outcome.PARTIAL, "1 set(s) skipped; see Skipped packages")
    assert again.status == "success" and again.outcome.text == "Did nothing: nothing new to ingest"
    assert busy.status == "partial" and busy.outcome.key == Outcome.IDLE, busy.error
    assert busy.outcome.why.startswith("Reader A") and "busy in another process" in busy.outcome.why
    assert locked.status == "queued" and locked.outcome.key == Outcome.WAITING, locked.error
    assert all(agrees_with_its_filter(run) for run in (first, again, busy, locked))
    queued = IngestionRun.objects.create(account=account)
    assert (queued.outcome.text, agrees_with_its_filter(queued)) == ("Waiting: for a free worker", True)


def test_the_runs_page_and_the_api_say_the_same_outcome(ingest_world, admin_client, api):
    ingest_world(world(messages=MESSAGES))
    first = run_cycle()
    again = run_cycle()

    page = admin_client.get(reverse("ingestion:runs")).content.decode()
    idle_only = admin_client.get(reverse("ingestion:runs"), {"status": "idle"}).content.decode()
    detail = admin_client.get(reverse("ingestion:run-detail", args=[again.pk])).content.decode()
    listed = api.get("/api/ingestion-runs/", {"outcome": "idle"}).json()["results"]
    one = api.get(f"/api/ingestion-runs/{first.pk}/").json()

    assert 'class="badge outcome--partial"' in page and 'class="badge outcome--idle"' in page
    assert "Success" not in page.split("<tbody>")[1], "no run ingested nothing and says Success"
    assert f'id="run-{again.pk}"' in idle_only and f'id="run-{first.pk}"' not in idle_only
    assert 'Did nothing <span class="pill-count">1</span>' in page
    assert "Did nothing: nothing new to ingest" in detail
    assert [run["id"] for run in listed] == [again.pk]
    assert (listed[0]["status"], listed[0]["outcome"], listed[0]["outcome_text"]) == (
        "success",
        "idle",
        "Did nothing: nothing new to ingest",
    )
    assert (one["status"], one["outcome"]) == ("partial", "partial")
