"""A channel's share of a cycle: a big backfill takes at most its share of sets, every other channel with new
posts has its turn in the same cycle, and the backfill goes on in a cycle queued at once, losing nothing."""

import pytest
from django.urls import reverse

from core.models import RunStatus
from ingestion.models import AccountChannelMap, Channel, IngestionRun
from ingestion.pipeline import ingestion_run_execute
from packages.models import Package
from tests.support.ingestion import READER, SOURCE, run_cycle, uploaded_names, world
from tests.support.pages import htmx_post

pytestmark = pytest.mark.django_db(transaction=True)

OTHER = 1002


def sets(count: int, *, first_id: int, prefix: str) -> list[dict]:
    return [
        {
            "id": first_id + n,
            "document": {"name": f"{prefix}-{n}.zip", "archive": [{"path": f"{prefix}/{n}.stl", "size": 900}]},
        }
        for n in range(count)
    ]


@pytest.fixture
def backfill_beside_one_new_set(ingest_world, settings, tmp_path):
    """SOURCE holds a backlog of 7 sets; OTHER, read by the same account, gets one new set."""
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"
    other = {
        "id": OTHER,
        "title": "Models B",
        "type": "channel",
        "role": "source",
        "members": [READER],
        "messages": sets(1, first_id=50, prefix="new"),
    }
    ingest_world(world(messages=sets(7, first_id=10, prefix="old"), more_chats=[other]))


def continue_queued() -> IngestionRun:
    """The cycle the last one queued for the rest of a backfill, worked here as a worker would."""
    queued = IngestionRun.objects.get(status=RunStatus.QUEUED)
    assert queued.starts_at is not None, "queued to start shortly, not at once in the same breath"
    ingestion_run_execute(run_id=queued.pk)
    queued.refresh_from_db()
    return queued


def test_a_backfill_takes_its_share_and_the_other_channel_its_turn_in_the_same_cycle(backfill_beside_one_new_set):
    Channel.objects.filter(chat__telegram_id=SOURCE).update(sets_per_cycle=3)

    first = run_cycle()

    assert (first.status, first.ingested) == (RunStatus.SUCCESS, 4), first.error
    assert "new-0.zip" in uploaded_names(), "the new set landed in the first cycle"
    assert sorted(name for name in uploaded_names() if name.startswith("old")) == [
        "old-0.zip",
        "old-1.zip",
        "old-2.zip",
    ]
    backlog = AccountChannelMap.objects.get(channel__chat__telegram_id=SOURCE)
    assert backlog.last_processed_message_id == 12, "the watermark stops below the first set not taken"

    second = continue_queued()
    third = continue_queued()

    assert (second.ingested, third.ingested) == (3, 1), (second.error, third.error)
    assert not IngestionRun.objects.filter(status=RunStatus.QUEUED).exists(), "the backfill is done: no more cycles"
    names = uploaded_names()
    assert sorted(names) == sorted([f"old-{n}.zip" for n in range(7)] + ["new-0.zip"]), "each set once"
    assert Package.objects.count() == 8


def test_without_a_share_of_its_own_a_channel_takes_the_default(backfill_beside_one_new_set, settings):
    settings.INGEST_CHANNEL_SETS_PER_CYCLE = 5

    first = run_cycle()

    assert first.ingested == 6, first.error
    assert continue_queued().ingested == 2


def test_the_share_is_set_in_the_api_and_a_bad_one_says_what_to_use(backfill_beside_one_new_set, api, settings):
    settings.INGEST_CHANNEL_SETS_PER_CYCLE = 10
    channel = Channel.objects.get(chat__telegram_id=SOURCE)
    url = f"/api/channels/{channel.pk}/"

    assert api.get(url).json()["share"] == 10
    response = api.patch(url, {"sets_per_cycle": 3}, format="json")
    assert response.status_code == 200, response.json()
    assert (response.json()["sets_per_cycle"], response.json()["share"]) == (3, 3)

    for bad in (0, 5000, "three"):
        refused = api.patch(url, {"sets_per_cycle": bad}, format="json")
        assert refused.status_code == 400, refused.json()
        assert "1 to 1000 sets a cycle" in str(refused.json()) or "valid integer" in str(refused.json())
    assert Channel.objects.get(pk=channel.pk).sets_per_cycle == 3

    cleared = api.patch(url, {"sets_per_cycle": None}, format="json")
    assert (cleared.json()["sets_per_cycle"], cleared.json()["share"]) == (None, 10)


def test_the_channels_page_sets_the_share_and_keeps_a_bad_one_beside_its_error(backfill_beside_one_new_set, operator):
    channel = Channel.objects.get(chat__telegram_id=SOURCE)
    url = reverse("ingestion:channel-settings", args=[channel.pk])

    html = htmx_post(operator, url, {"category": "", "sets_per_cycle": "0"})

    assert 'class="field-error"' in html and "1 to 1000 sets a cycle" in html and 'value="0"' in html
    assert Channel.objects.get(pk=channel.pk).sets_per_cycle is None

    html = htmx_post(operator, url, {"category": "", "sets_per_cycle": "4"})
    assert "Saved." in html and 'name="sets_per_cycle" placeholder="" value="4"' in html
    assert Channel.objects.get(pk=channel.pk).sets_per_cycle == 4
    detail = operator.get(reverse("ingestion:channel-detail", args=[channel.pk])).content.decode()
    assert "Share of a cycle" in detail and "then the other channels have their turn" in detail


def test_sets_that_cost_no_transfer_do_not_count_against_the_share(ingest_world, settings, tmp_path):
    # Ten sets too large to take, then two to take: a share of one still passes over the ten in the same cycle.
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"
    settings.INGEST_MAX_PACKAGE_BYTES = 3000
    huge = [{"id": 10 + n, "document": {"name": f"huge-{n}.zip", "size": 5000, "seed": n}} for n in range(10)]
    ingest_world(world(messages=huge + sets(2, first_id=30, prefix="small")))
    Channel.objects.filter(chat__telegram_id=SOURCE).update(sets_per_cycle=1)

    first = run_cycle()

    assert (first.ingested, first.skipped) == (1, 10), first.error
    assert continue_queued().ingested == 1
