"""Ingestion you can see into: each run keeps what it did with each channel and why (ChannelScan), shown on the
run's page and the channel's; Ingest now on a channel runs that channel alone; Retry says when it runs."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from django_celery_beat.models import IntervalSchedule, PeriodicTask

from accounts.models import TelegramAccount
from core import task_names
from core.models import RunStatus
from ingestion import selectors
from ingestion.models import ChannelScan, IngestionRun, ScanAction, SkippedPackage, SkipReason
from ingestion.pipeline import ingestion_run_execute
from packages.models import Package
from tests.support.ingestion import READER, SOURCE, run_cycle, world

pytestmark = pytest.mark.django_db

MESSAGES = [
    {"id": 10, "text": "hello"},
    {"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}},
    {"id": 12, "document": {"name": "bust.stl", "size": 4000, "seed": 3}},
    {"id": 13, "document": {"name": "huge.zip", "archive": [{"path": "huge.stl", "size": 60_000}]}},
]
OTHER = {
    "id": 1002,
    "title": "Models B",
    "type": "channel",
    "role": "source",
    "members": [READER],
    "messages": [{"id": 5, "document": {"name": "wyvern.zip", "archive": [{"path": "w.stl", "size": 100}]}}],
}


@pytest.fixture(autouse=True)
def storage(storage, settings):
    settings.INGEST_MAX_PACKAGE_BYTES = 30_000  # huge.zip is skipped as too large


def scans(run: IngestionRun) -> dict[str, ChannelScan]:
    return {scan.channel.title: scan for scan in selectors.run_scans(run=run)}


def test_a_cycle_records_each_channel_scan_with_its_counts_and_requests(ingest_world):
    ingest_world(world(messages=MESSAGES, more_chats=[OTHER]))

    run = run_cycle()

    assert run.status == RunStatus.PARTIAL  # huge.zip was skipped
    by_channel = scans(run)
    assert set(by_channel) == {"Models A", "Models B"}
    models_a = by_channel["Models A"]
    assert (models_a.action, models_a.reason) == (ScanAction.SCAN, "never scanned")
    assert (models_a.found, models_a.ingested, models_a.duplicates, models_a.skipped) == (3, 2, 0, 1)
    assert (
        models_a.messages == 3 and models_a.requests > 0
    )  # the documents (the search asks for them alone) and models_a.seconds > 0
    assert (by_channel["Models B"].found, by_channel["Models B"].ingested) == (1, 1)
    assert sum(scan.requests for scan in by_channel.values()) <= run.requests_sent
    assert sum(scan.ingested for scan in by_channel.values()) == run.ingested == 3

    again = run_cycle()

    # Nothing new: the batched last-message check answers for both, and no history is read.
    for scan in scans(again).values():
        assert (scan.action, scan.reason, scan.found) in {
            (ScanAction.CHECK, "last-message check: nothing new since the last scan", 0),
            (ScanAction.SKIP, "scanned recently and idle", 0),
        }
        assert scan.requests == 0  # the one batched request is the run's, not a channel's
    assert again.requests_sent >= 1


def test_the_run_page_shows_channels_skipped_with_reasons_and_what_it_ingested(admin_client, ingest_world):
    ingest_world(world(messages=MESSAGES, more_chats=[OTHER]))
    run = run_cycle()

    page = admin_client.get(reverse("ingestion:run-detail", args=[run.pk])).content.decode()

    assert f"Run #{run.pk}" in page and "Partial" in page
    assert "Models A" in page and "Models B" in page and "never scanned" in page
    assert "huge.zip" in page and "Too large" in page and "the largest package the console takes" in page
    assert "dragon.zip" in page and "wyvern.zip" in page
    assert "Requests to Telegram" in page and f">{run.requests_sent}<" in page
    runs_page = admin_client.get(reverse("ingestion:runs")).content.decode()
    assert reverse("ingestion:run-detail", args=[run.pk]) in runs_page


def test_ingest_now_on_a_channel_runs_that_channel_alone_and_shows_its_run(admin_client, ingest_world):
    ingest_world(world(messages=MESSAGES, more_chats=[OTHER]))
    channel = selectors.channel_list().get(chat__telegram_id=SOURCE)

    response = admin_client.post(reverse("ingestion:channel-ingest-now", args=[channel.pk]))

    run = IngestionRun.objects.get()
    assert response.status_code == 302 and response.url == reverse("ingestion:run-detail", args=[run.pk])
    assert (run.channel_id, run.status, run.trigger) == (channel.pk, RunStatus.QUEUED, "manual")
    # What the worker does with it.
    ingestion_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert list(scans(run)) == ["Models A"]
    assert scans(run)["Models A"].reason == "Ingest now: new messages"
    assert set(Package.objects.values_list("file_name", flat=True)) == {"dragon.zip", "bust.stl"}

    page = admin_client.get(reverse("ingestion:channel-detail", args=[channel.pk])).content.decode()
    assert "Latest packages" in page and "dragon.zip" in page and "bust.stl" in page
    assert "Scan history" in page and f"#{run.pk}" in page and "Ingest now" in page

    # Ingest now again while that account has a run open: the open run is shown, no second one is made.
    open_run = IngestionRun.objects.create(account=run.account, status=RunStatus.QUEUED)
    again = admin_client.post(reverse("ingestion:channel-ingest-now", args=[channel.pk]))
    assert again.url == reverse("ingestion:run-detail", args=[open_run.pk])
    assert IngestionRun.objects.count() == 2


def test_ingest_now_without_a_reader_says_what_to_do(admin_client, ingest_world):
    ingest_world(world(messages=MESSAGES))
    channel = selectors.channel_list().get(chat__telegram_id=SOURCE)
    TelegramAccount.objects.filter(phone=READER).update(is_active=False)

    response = admin_client.post(reverse("ingestion:channel-ingest-now", args=[channel.pk]), follow=True)

    assert "No logged-in account reads Models A; add a reader on the Channels page." in response.content.decode()
    assert not IngestionRun.objects.exists()


def test_the_channel_page_says_when_the_next_cycle_comes_from_the_beat_schedule(admin_client, ingest_world):
    ingest_world(world(messages=MESSAGES))
    channel = selectors.channel_list().get(chat__telegram_id=SOURCE)
    assert selectors.next_cycle_at() is None
    assert (
        "next cycle once beat runs"
        in admin_client.get(reverse("ingestion:channel-detail", args=[channel.pk])).content.decode()
    )

    every, _ = IntervalSchedule.objects.get_or_create(every=600, period=IntervalSchedule.SECONDS)
    PeriodicTask.objects.create(
        name="ingestion-cycle",
        task=task_names.INGESTION_CYCLE_START,
        interval=every,
        last_run_at=timezone.now() - timedelta(minutes=3),
    )

    next_at = selectors.next_cycle_at()
    assert timedelta(minutes=6) < next_at - timezone.now() <= timedelta(minutes=7)
    page = admin_client.get(reverse("ingestion:channel-detail", args=[channel.pk])).content.decode()
    assert f'next cycle at <time datetime="{next_at:%Y-%m-%dT%H:%M}' in page
    run_cycle()  # huge.zip is skipped; Retry all leaves it to the next cycle, and says when that is, with its zone
    retried = admin_client.post(reverse("ingestion:skipped-retry-all"), {"reason": "SIZE_LIMIT"}, follow=True)
    assert f"the next ingestion cycle, at {next_at:%H:%M} UTC (in 6 min) tries them" in retried.content.decode()


def test_retry_runs_the_set_now_and_says_which_run(admin_client, ingest_world, settings):
    ingest_world(world(messages=MESSAGES))
    run_cycle()
    skipped = SkippedPackage.objects.get(reason=SkipReason.SIZE_LIMIT)
    settings.INGEST_MAX_PACKAGE_BYTES = 10**9

    answer = admin_client.post(reverse("ingestion:skipped-retry", args=[skipped.pk]), HTTP_HX_REQUEST="true")

    retry = IngestionRun.objects.get(status=RunStatus.QUEUED)
    text = answer.content.decode()
    assert f"run #{retry.pk} tries it now" in text
    assert reverse("ingestion:run-detail", args=[retry.pk]) in text
    ingestion_run_execute(run_id=retry.pk)
    assert Package.objects.filter(file_name="huge.zip").exists()
    assert not SkippedPackage.objects.exists()


def test_the_api_gives_each_run_its_channel_scans(admin_client, ingest_world):
    ingest_world(world(messages=MESSAGES, more_chats=[OTHER]))
    run = run_cycle()

    body = admin_client.get(f"/api/ingestion-runs/{run.pk}/").json()
    listed = admin_client.get("/api/ingestion-runs/").json()

    assert body["requests_sent"] == run.requests_sent > 0 and body["channel"] is None
    assert [scan["channel_title"] for scan in body["scans"]] == ["Models A", "Models B"]
    first = body["scans"][0]
    assert (first["action"], first["reason"], first["found"], first["skipped"]) == ("scan", "never scanned", 3, 1)
    assert listed["results"][0]["scans"] == body["scans"]


def test_scan_history_older_than_its_retention_is_purged(ingest_world, settings):
    from ingestion.tasks import channel_scans_purge

    ingest_world(world(messages=MESSAGES))
    run_cycle()
    old = ChannelScan.objects.get()
    ChannelScan.objects.filter(pk=old.pk).update(
        scanned_at=timezone.now() - timedelta(days=settings.INGEST_SCAN_HISTORY_DAYS, minutes=1)
    )
    kept = run_cycle()

    assert channel_scans_purge() == 1
    assert list(ChannelScan.objects.values_list("run", flat=True)) == [kept.pk]
    assert IngestionRun.objects.count() == 2  # the runs stay
