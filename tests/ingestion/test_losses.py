"""Ways ingestion could lose or loop work, each shown not to."""

import errno
import hashlib
import os
import shutil
import time
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from accounts.models import TelegramAccount
from core import locks
from core.models import Notification
from ingestion import fetching
from ingestion.models import Channel, IngestionRun, SkippedPackage
from ingestion.recovery import packages_check_destination, staging_sweep
from ingestion.staging import StagingFile
from packages import services as package_services
from packages.models import Package, RawFile
from packages.services import raw_files_purge
from tests.support.ingestion import DESTINATION, READER, SOURCE, run_cycle, uploads, world

pytestmark = pytest.mark.django_db

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rar"
ZIP = {"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}}


@pytest.fixture(autouse=True)
def no_recent_scan_window(settings):
    settings.INGEST_SKIP_RECENT_SCAN_WINDOW_SECONDS = 0  # cycles here come seconds apart, as if minutes


def test_a_retry_after_the_raw_file_was_purged_downloads_again(ingest_world, settings):
    # Every upload attempt of the first cycle fails (the first try and INGEST_TRANSIENT_RETRIES more).
    faults = [{"op": "upload", "error": "network", "times": settings.INGEST_TRANSIENT_RETRIES + 1}]
    ingest_world(world(messages=[ZIP], faults=faults))
    Channel.objects.filter(chat__telegram_id=SOURCE).update(expiration_days=0)

    first = run_cycle()
    assert first.skipped == 1 and SkippedPackage.objects.get().reason == "UPLOAD_FAILED"
    assert raw_files_purge(now=timezone.now() + timedelta(hours=4)) == 1

    second = run_cycle()

    assert (second.status, second.ingested) == ("success", 1), second.error
    assert [message["document"]["name"] for message in uploads()] == ["dragon.zip"]
    raw = RawFile.objects.get()
    assert raw.purged_at is None and raw.object, "the fresh download became the raw file's object again"
    assert Package.objects.get().file_count >= 1, "listed from the fresh download"


RAR_VOLUMES = [FIXTURES / f"rar5-vols.part{n}.rar" for n in (1, 2, 3)]


def cycles_until(predicate, *, seconds: float) -> list:
    """Cycles a second apart until `predicate()` holds (or the time is up), as beat would run them."""
    runs, deadline = [], time.monotonic() + seconds
    while time.monotonic() < deadline:
        runs.append(run_cycle())
        if predicate():
            break
        time.sleep(1)
    return runs


@pytest.mark.parametrize("kind", ["7z volumes", "rar parts"])
def test_a_volume_set_posted_across_scans_waits_and_is_ingested_whole(ingest_world, settings, kind):
    settings.INGEST_SET_SETTLE_SECONDS = 3
    if kind == "7z volumes":
        entries = [{"path": f"relic/part{n}.stl", "size": 700_000} for n in range(4)]
        documents = [{"name": "relic.7z", "archive": entries, "volume_size": 1_048_576}]
        names = ["relic.7z.001", "relic.7z.002", "relic.7z.003"]
    else:
        documents = [{"name": path.name, "file": str(path)} for path in RAR_VOLUMES]
        names = [path.name for path in RAR_VOLUMES]
    # The first volume is there at the first scan; the others arrive a second and two seconds later.
    if kind == "7z volumes":
        messages = [{"id": 10, "document": documents[0], "arrives_after_seconds": 0, "volume_interval_seconds": 1}]
    else:
        messages = [
            {"id": 10 + n, "document": document, "arrives_after_seconds": n} for n, document in enumerate(documents)
        ]
    ingest_world(world(messages=messages))

    first = run_cycle()
    waiting = SkippedPackage.objects.get()
    assert (first.status, first.ingested, first.skipped) == ("success", 0, 0), first.error
    assert waiting.reason == "WAITING_FOR_VOLUMES" and "Waiting for more volumes" in waiting.error_message
    assert not Package.objects.exists(), "never a package of the volumes posted so far"

    cycles_until(lambda: Package.objects.exists(), seconds=20)

    package = Package.objects.get()
    assert package.volume_names == names
    assert [message["document"]["name"] for message in uploads()] == names, "each volume uploaded once"
    assert package.file_count == (4 if kind == "7z volumes" else package.file_count) and package.file_count > 0
    assert not SkippedPackage.objects.exists()


def test_a_missing_volume_posted_later_brings_the_set_back_even_past_the_cap(ingest_world, settings):
    settings.INGEST_SET_SETTLE_SECONDS = 0
    settings.INGEST_MAX_SKIP_ATTEMPTS = 1
    part = {n: {"name": path.name, "file": str(path)} for n, path in enumerate(RAR_VOLUMES, 1)}
    sandbox = ingest_world(world(messages=[{"id": 10, "document": part[1]}, {"id": 11, "document": part[3]}]))

    run_cycle()
    skipped = SkippedPackage.objects.get()
    assert (skipped.reason, skipped.attempt_count) == ("MISSING_PART", 1)
    assert run_cycle().skipped == 0, "passed over: the cap is reached"

    sandbox.message_post(SOURCE, document=part[2])
    run = run_cycle()

    assert run.ingested == 1, run.error
    package = Package.objects.get()
    assert package.volume_names == [path.name for path in RAR_VOLUMES]
    assert [message["document"]["name"] for message in uploads()] == package.volume_names
    assert not SkippedPackage.objects.exists()


def test_a_destination_message_deleted_by_a_person_is_uploaded_again_into_the_same_package(ingest_world):
    sandbox = ingest_world(world(messages=[ZIP]))
    run_cycle()
    package = Package.objects.get()
    files = list(package.files.values_list("path", flat=True))
    (first_upload,) = package.dest_message_ids
    sandbox.message_delete(DESTINATION, first_upload)

    assert packages_check_destination() == 1
    assert packages_check_destination() == 0, "flagged once; the next check waits for the new upload"
    run = run_cycle()

    assert (run.status, run.ingested, run.skipped) == ("success", 1, 0), run.error
    again = Package.objects.get()
    assert again.pk == package.pk and again.upload_generation == 1 and not again.reupload_needed
    assert list(again.files.values_list("path", flat=True)) == files, "the listing is kept"
    assert again.dest_message_ids != [first_upload]
    assert [message["id"] for message in uploads()] == again.dest_message_ids, "one live upload"
    assert not SkippedPackage.objects.exists()
    assert run_cycle().ingested == 0, "and not again"


def test_a_duplicate_in_flight_is_kept_and_checked_again_until_the_other_copy_lands(ingest_world):
    sandbox = ingest_world(world(messages=[ZIP]))
    content_hash = hashlib.sha256(sandbox.message_bytes(SOURCE, ZIP["id"])).hexdigest()
    database = connection.settings_dict
    # Another worker holds the content's lock: it is uploading the same archive right now.
    other = psycopg.connect(
        host=database["HOST"], port=database["PORT"], user=database["USER"], dbname=database["NAME"], autocommit=True
    )
    other.execute("SELECT pg_advisory_lock(%s)", [locks.lock_key(locks.CONTENT_HASH, content_hash)])

    run = run_cycle()

    pending = SkippedPackage.objects.get()
    assert (pending.reason, pending.attempt_count) == ("IN_FLIGHT", 0)
    assert (run.status, run.skipped) == ("success", 0), run.error
    assert not Package.objects.exists() and not uploads()

    other.close()  # the other worker died before its upload landed
    run = run_cycle()

    assert run.ingested == 1, run.error
    assert [message["document"]["name"] for message in uploads()] == ["dragon.zip"]
    assert not SkippedPackage.objects.exists()


# -- fault isolation and the disk ---------------------------------------------------------------------------------

OTHER_SOURCE = 1002


def two_sources() -> dict:
    data = world(messages=[ZIP])
    other = {
        "id": OTHER_SOURCE,
        "title": "Models B",
        "type": "channel",
        "role": "source",
        "members": [data["accounts"][0]["phone"]],
        "messages": [{"id": 5, "document": {"name": "castle.zip", "archive": [{"path": "castle.stl", "size": 900}]}}],
    }
    data["chats"].append(other)
    return data


def test_an_unexpected_error_in_one_set_is_that_sets_skip_and_the_cycle_goes_on(ingest_world, monkeypatch):
    ingest_world(two_sources())
    original = package_services.upload_plan

    def plan(*, volumes, limit):
        if volumes[0][0] == "dragon.zip":
            raise RuntimeError("something nobody expected")
        return original(volumes=volumes, limit=limit)

    monkeypatch.setattr(package_services, "upload_plan", plan)
    run = run_cycle()

    assert run.status == "partial" and run.ingested == 1
    skipped = SkippedPackage.objects.get()
    assert (skipped.reason, skipped.error_message) == ("ERROR", "RuntimeError: something nobody expected")
    assert skipped.is_retryable


def test_an_unexpected_error_in_one_channel_is_that_channels_error(ingest_world, monkeypatch):
    ingest_world(two_sources())
    original = fetching.documents_above

    async def history(gateway, ref, **kwargs):
        if ref.id == SOURCE:
            raise KeyError("broken channel")
        return await original(gateway, ref, **kwargs)

    monkeypatch.setattr(fetching, "documents_above", history)
    run = run_cycle()

    assert run.status == "partial" and run.ingested == 1
    assert "KeyError" in Channel.objects.get(chat__telegram_id=SOURCE).last_error
    assert Channel.objects.get(chat__telegram_id=OTHER_SOURCE).last_error == ""


def test_a_full_disk_is_checked_before_the_download_and_the_set_waits(ingest_world, monkeypatch):
    ingest_world(world(messages=[ZIP]))
    monkeypatch.setattr(fetching.shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(10**9, 10**9, 1000))

    run = run_cycle()

    skipped = SkippedPackage.objects.get()
    assert (skipped.reason, skipped.is_retryable) == ("DISK_FULL", True)
    assert "free on the staging disk" in skipped.error_message
    assert Notification.objects.get(type="disk_full").severity == "error"
    assert run.status == "partial" and not uploads()

    monkeypatch.undo()
    assert run_cycle().ingested == 1


def test_no_space_left_while_staging_is_a_disk_full_skip(ingest_world, monkeypatch):
    ingest_world(world(messages=[ZIP]))

    def full(self, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(StagingFile, "write", full)
    run = run_cycle()

    assert SkippedPackage.objects.get().reason == "DISK_FULL"
    assert run.status == "partial"


def test_staging_left_by_a_killed_worker_is_swept(ingest_world, settings):
    ingest_world(world(messages=[ZIP]))
    running = IngestionRun.objects.create(account=TelegramAccount.objects.get(phone=READER), status="running")
    staging = Path(settings.INGEST_STAGING_DIR)
    for name in ("run-999999", f"run-{running.pk}", "run-notes", "set-left", "set-busy"):
        (staging / name).mkdir(parents=True)
        (staging / name / "part.bin").write_bytes(b"x")
    week_ago = time.time() - 7 * 86400  # a backfill's fetched copies, left by a killed worker
    os.utime(staging / "set-left", (week_ago, week_ago))

    assert staging_sweep() == 2

    assert sorted(path.name for path in staging.iterdir()) == sorted([f"run-{running.pk}", "run-notes", "set-busy"])


def test_one_deleted_volume_of_a_set_is_uploaded_again_alone(ingest_world, settings):
    settings.INGEST_SET_SETTLE_SECONDS = 0
    entries = [{"path": f"relic/part{n}.stl", "size": 400_000} for n in range(3)]
    document = {"name": "relic.7z", "archive": entries, "volume_size": 524_288}
    sandbox = ingest_world(world(messages=[{"id": 10, "document": document}]))
    run_cycle()
    package = Package.objects.get()
    first, gone, last = package.dest_message_ids
    sandbox.message_delete(DESTINATION, gone)

    packages_check_destination()
    run_cycle()

    package.refresh_from_db()
    assert package.dest_message_ids[0] == first and package.dest_message_ids[2] == last
    assert package.dest_message_ids[1] not in (first, gone, last)
    assert [m["document"]["name"] for m in uploads()] == ["relic.7z.001", "relic.7z.003", "relic.7z.002"]
