"""Parallel transfers in the pipeline: a worker killed mid-file with parts in flight goes on at the first
missing part, and the next set downloads while the one before it uploads."""

import hashlib
import os
import signal
import time
from pathlib import Path

import pytest
from django.conf import settings

from core.models import RunStatus
from ingestion import fetching, uploading
from ingestion.models import IngestionRun, SkippedPackage
from ingestion.recovery import staging_sweep
from packages.models import Package
from telegram.records import PART_SIZE
from telegram.sandbox.world import World
from tests.support.ingestion import READER, SOURCE, run_cycle, uploads, world
from tests.support.processes import start_program

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

PARTS = 48  # 24 MiB; staging writes 8 MiB blocks, so a kill after 8 MiB leaves whole parts on disk


def partial_size(staging: Path) -> int:
    return sum(path.stat().st_size for path in (staging / "partial").glob("*")) if staging.is_dir() else 0


def test_a_worker_killed_mid_download_resumes_at_the_first_missing_part(ingest_world, tmp_path, settings_override):
    data = world(messages=[{"id": 10, "document": {"name": "big.zip", "size": PARTS * PART_SIZE, "seed": 5}}])
    data["network"] = {"rtt_ms": 50, "connection_bytes_per_s": 3_000_000}
    ingest_world(data)
    sandbox = World(settings.SANDBOX_PATH)
    staging = tmp_path / "staging"

    worker = start_program(
        ["manage.py", "ingest", "--once", "--account", READER],
        TRANSFER_PARTS_IN_FLIGHT="4",
        TRANSFER_CONNECTIONS="2",
    )
    deadline = time.monotonic() + 60
    while partial_size(staging) < 10 * 1024 * 1024 and worker.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(worker.pid, signal.SIGKILL)
    worker.communicate()
    held = partial_size(staging)
    requested = sandbox.stats()["calls"][READER]["upload.getFile"]
    assert 0 < held < PARTS * PART_SIZE and held % PART_SIZE == 0, held
    assert requested > held // PART_SIZE, "parts were in flight beyond what reached the disk"
    assert not uploads()

    # The reaper's part: the dead worker's run is over; the next cycle of the account starts.
    IngestionRun.objects.filter(status=RunStatus.RUNNING).update(status=RunStatus.FAILED)
    sandbox.stats_reset()
    run = run_cycle()

    assert run.ingested == 1, run.error
    assert sandbox.stats()["calls"][READER]["upload.getFile"] == PARTS - held // PART_SIZE, "no part fetched twice"
    document = sandbox.document(sandbox.message(SOURCE, 10)["document_id"])
    expected = sandbox.document_sha256(document)
    assert Package.objects.get().content_hash == expected
    (upload,) = uploads()
    assert upload["document"]["sha256"] == expected
    assert not (staging / "partial").exists() or not any((staging / "partial").iterdir()), "nothing left behind"


@pytest.fixture
def settings_override(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"
    settings.TRANSFER_PARTS_IN_FLIGHT = 4
    settings.TRANSFER_CONNECTIONS = 2
    return settings


def test_a_download_that_failed_part_way_is_resumed_by_the_next_cycle(ingest_world, settings_override):
    # Part 20 fails past its retries: the set is skipped, the parts before it stay for the next cycle.
    settings_override.INGEST_TRANSIENT_RETRIES = 0
    size = 40 * PART_SIZE
    data = world(messages=[{"id": 10, "document": {"name": "big.zip", "size": size, "seed": 6}}])
    data["faults"] = [{"op": "download", "error": "network", "after": 20, "times": 3}]
    ingest_world(data)
    sandbox = World(settings.SANDBOX_PATH)

    first = run_cycle()
    assert first.skipped == 1
    held = partial_size(Path(settings_override.INGEST_STAGING_DIR))
    assert held == 20 * PART_SIZE, "every part before the failed one"

    sandbox.stats_reset()
    second = run_cycle()

    assert second.ingested == 1, second.error
    assert sandbox.stats()["calls"][READER]["upload.getFile"] == 40 - 20
    expected = hashlib.sha256(sandbox.message_bytes(SOURCE, 10)).hexdigest()
    assert Package.objects.get().content_hash == expected


SETS = [
    {"id": 10 + n, "document": {"name": f"model-{n}.zip", "archive": [{"path": f"m{n}.stl", "size": 1_500_000 + n}]}}
    for n in range(3)
]


def record_stages(monkeypatch) -> list[tuple[str, str, float]]:
    """(stage, file name, "start" | "end" at monotonic seconds) of every download and upload, in order."""
    events = []

    def timed(owner, name, stage, file_name):
        original = getattr(owner, name)

        async def wrapper(*args, **kwargs):
            label = file_name(*args, **kwargs)
            events.append((stage, label, "start", time.monotonic()))
            try:
                return await original(*args, **kwargs)
            finally:
                events.append((stage, label, "end", time.monotonic()))

        monkeypatch.setattr(owner, name, wrapper)

    timed(fetching.FetchStage, "download", "download", lambda self, reader, ref, item, folder, **_: item.document.name)
    timed(uploading.UploadStage, "upload", "upload", lambda self, writer, items, *_: items[0].document.name)
    return events


def when(events, stage, name, edge) -> float:
    return next(at for kind, label, moment, at in events if (kind, label, moment) == (stage, name, edge))


def test_the_next_set_downloads_while_the_one_before_it_uploads(ingest_world, settings_override, monkeypatch):
    data = world(messages=SETS)
    data["network"] = {"rtt_ms": 20, "connection_bytes_per_s": 2_000_000}
    ingest_world(data)
    events = record_stages(monkeypatch)

    run = run_cycle()

    assert (run.status, run.ingested) == (RunStatus.SUCCESS, 3), run.error
    for before, after in (("model-0.zip", "model-1.zip"), ("model-1.zip", "model-2.zip")):
        assert when(events, "download", after, "start") < when(events, "upload", before, "end")
        assert when(events, "upload", after, "start") >= when(events, "upload", before, "end"), "uploads in order"
    assert [upload["document"]["name"] for upload in uploads()] == ["model-0.zip", "model-1.zip", "model-2.zip"]
    assert Package.objects.count() == 3


def test_one_part_in_flight_is_one_thing_at_a_time(ingest_world, settings_override, monkeypatch):
    settings_override.TRANSFER_PARTS_IN_FLIGHT = 1
    ingest_world(world(messages=SETS[:2]))
    events = record_stages(monkeypatch)

    run = run_cycle()

    assert run.ingested == 2, run.error
    assert when(events, "download", "model-1.zip", "start") > when(events, "upload", "model-0.zip", "end")


def test_a_set_failing_in_the_background_is_skipped_in_its_turn(ingest_world, settings_override):
    # The second set's download fails while the first uploads: the first is ingested, the second skipped.
    settings_override.INGEST_TRANSIENT_RETRIES = 0
    data = world(messages=SETS[:2])
    data["faults"] = [{"op": "download", "message": 11, "error": "network", "times": 5}]
    ingest_world(data)

    run = run_cycle()

    assert (run.ingested, run.skipped) == (1, 1), run.error
    assert [upload["document"]["name"] for upload in uploads()] == ["model-0.zip"]
    skipped = SkippedPackage.objects.get()
    assert (skipped.file_name, skipped.reason) == ("model-1.zip", "DOWNLOAD_FAILED")


def test_unfinished_downloads_are_kept_for_a_day_then_swept(settings_override):
    partial = Path(settings_override.INGEST_STAGING_DIR) / "partial"
    partial.mkdir(parents=True)
    (partial / "1-100").write_bytes(b"x" * PART_SIZE)
    (partial / "1-200").write_bytes(b"x" * PART_SIZE)
    day_and_more = time.time() - settings_override.INGEST_PARTIAL_KEEP_HOURS * 3600 - 60
    os.utime(partial / "1-100", (day_and_more, day_and_more))

    assert staging_sweep() == 1

    assert [path.name for path in partial.iterdir()] == ["1-200"], "the recent one is still resumable"
