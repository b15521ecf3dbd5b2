"""An account's ingestion hours and bandwidth cap: every file part of the account takes its bytes from one budget
shared by every process, and outside its hours nothing is transferred (a transfer stops after its part in flight,
keeping what it has)."""

import asyncio
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError

from accounts.models import TelegramAccount
from core import clock
from core.models import RunStatus
from ingestion import services
from ingestion.models import IngestionRun, SkippedPackage
from ingestion.transfer_budget import TransferBudget
from packages.models import Package
from telegram.records import PART_SIZE
from telegram.sandbox.world import World
from tests.support.buckets import send_buckets_flush
from tests.support.ingestion import READER, WRITER, run_cycle, uploads, world
from tests.support.processes import assert_paced, race_in_processes

pytestmark = pytest.mark.django_db(transaction=True)

NOON = datetime(2026, 11, 27, 12, 0, tzinfo=UTC)
EVENING = datetime(2026, 11, 27, 19, 0, tzinfo=UTC)


@pytest.fixture
def staging(settings, tmp_path, fresh_buckets):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"
    settings.TRANSFER_PARTS_IN_FLIGHT = 8
    settings.TRANSFER_CONNECTIONS = 2
    return Path(settings.INGEST_STAGING_DIR)


def cap(phone: str, bytes_per_second: int | None, *, hours=(0, 24), zone="UTC") -> TelegramAccount:
    TelegramAccount.objects.filter(phone=phone).update(
        ingest_bytes_per_second=bytes_per_second,
        ingest_start_hour=hours[0],
        ingest_end_hour=hours[1],
        ingest_timezone=zone,
    )
    return TelegramAccount.objects.get(phone=phone)


def fetched_parts(sandbox: World) -> int:
    return sandbox.stats()["calls"].get(READER, {}).get("upload.getFile", 0)


def partial_size(staging: Path) -> int:
    folder = staging / "partial"
    return sum(path.stat().st_size for path in folder.glob("*")) if folder.is_dir() else 0


@pytest.mark.processes
def test_two_processes_share_one_accounts_cap(ingest_world, staging, tmp_path):
    ingest_world(world(messages=[]))
    rate = 4 * PART_SIZE  # four parts a second, for the two processes together
    account = cap(READER, rate)

    reports = race_in_processes(tmp_path, "tests.ingestion.transfer_budget_worker", [account.pk, 6], [account.pk, 6])

    stamps = sorted(stamp for report in reports for stamp in report["stamps"])
    assert_paced(stamps, rate=rate / PART_SIZE, capacity=1, slack=0.5)
    assert stamps[-1] - stamps[0] >= (len(stamps) - 2) / 4, "twelve parts at four a second, whoever takes them"
    assert TelegramAccount.objects.get(pk=account.pk).ingest_spent_until is not None, "PostgreSQL keeps the spend"


def test_a_capped_cycle_downloads_and_uploads_no_faster_than_the_cap(ingest_world, staging):
    size = 12 * PART_SIZE
    ingest_world(world(messages=[{"id": 10, "document": {"name": "big.zip", "size": size, "seed": 3}}]))
    rate = 3 * PART_SIZE  # the download takes four seconds at the cap, the upload (the writer's) as long
    cap(READER, rate)
    cap(WRITER, rate)

    started = time.monotonic()
    run = run_cycle()
    took = time.monotonic() - started

    assert (run.status, run.ingested) == (RunStatus.SUCCESS, 1), run.error
    # Each side may start with one part's burst; parts in flight do not add to it.
    assert took >= 2 * (size - PART_SIZE) / rate, f"{2 * size} bytes in {took:.2f} s at a cap of {rate} bytes/s"
    assert [upload["document"]["sha256"] for upload in uploads()] == [Package.objects.get().content_hash]


def test_outside_its_hours_an_account_starts_no_cycle_and_reads_nothing(ingest_world, staging, at):
    ingest_world(world(messages=[{"id": 10, "document": {"name": "a.zip", "size": 5000, "seed": 1}}]))
    sandbox = World(settings.SANDBOX_PATH)
    cap(READER, None, hours=(20, 6), zone="Europe/Berlin")  # 20:00–06:00 in Berlin is 19:00–05:00 UTC
    at(NOON)
    sandbox.stats_reset()

    assert services.ingestion_cycle_start() == [], "the schedule leaves it alone"
    with pytest.raises(ValidationError, match="ingestion hours: .* 20:00–06:00 \\(Europe/Berlin\\)"):
        services.ingestion_run_request(account=TelegramAccount.objects.get(phone=READER))
    run = run_cycle()

    assert run.status == RunStatus.PARTIAL
    assert "Waiting for its ingestion hours" in run.error and "20:00" in run.error, run.error
    assert sandbox.stats()["calls"].get(READER, {}).get("upload.getFile", 0) == 0
    assert not uploads()

    at(EVENING)
    assert [run.account.phone for run in services.ingestion_cycle_start()] == [READER]


def test_hours_closing_mid_download_stop_after_the_part_and_keep_what_was_downloaded(
    ingest_world, staging, monkeypatch
):
    parts = 24
    ingest_world(world(messages=[{"id": 10, "document": {"name": "big.zip", "size": parts * PART_SIZE, "seed": 5}}]))
    sandbox = World(settings.SANDBOX_PATH)
    cap(READER, 4 * PART_SIZE, hours=(9, 18))  # six seconds of download at the cap
    now = {"at": NOON}
    monkeypatch.setattr(clock, "now", lambda: now["at"])

    def close_the_hours_part_way():
        deadline = time.monotonic() + 60
        while fetched_parts(sandbox) < 6 and time.monotonic() < deadline:
            time.sleep(0.02)
        now["at"] = EVENING

    closer = threading.Thread(target=close_the_hours_part_way)
    closer.start()
    first = run_cycle()
    closer.join()

    assert first.status == RunStatus.PARTIAL
    assert "Waiting for its ingestion hours" in first.error, first.error
    held = partial_size(staging)
    assert 0 < held < parts * PART_SIZE, held
    assert not uploads() and not SkippedPackage.objects.exists(), "nothing failed: the set waits for the hours"
    assert fetched_parts(sandbox) < parts

    now["at"] = NOON  # the hours open again
    sandbox.stats_reset()
    second = run_cycle()

    assert second.ingested == 1, second.error
    assert sandbox.stats()["calls"][READER]["upload.getFile"] == parts - held // PART_SIZE, "no part taken twice"
    expected = sandbox.document_sha256(sandbox.document(sandbox.message(1001, 10)["document_id"]))
    assert Package.objects.get().content_hash == expected
    assert IngestionRun.objects.count() == 2


def test_a_bucket_redis_forgot_starts_empty_from_what_postgresql_kept(ingest_world, staging):
    ingest_world(world(messages=[]))
    account = cap(READER, PART_SIZE)  # one part a second

    async def take(budget, parts: int) -> float:
        started = time.monotonic()
        for _ in range(parts):
            await budget(PART_SIZE)
        return time.monotonic() - started

    asyncio.run(take(TransferBudget(account=account), 3))  # the last part's bytes were due two seconds on
    send_buckets_flush()  # Redis restarted without its data
    waited = asyncio.run(take(TransferBudget(account=TelegramAccount.objects.get(pk=account.pk)), 1))

    assert waited >= 0.5, f"a forgotten bucket handed out a fresh burst at once ({waited:.2f} s)"
