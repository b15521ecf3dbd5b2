"""Two worker machines: each its own local disk (STASHCAST_VAR_DIR, staging and media folders), both sharing
PostgreSQL, Redis, the object store and one sandbox Telegram. Every set is ingested once; a set fetched on
one machine is uploaded by the other on retry, and a listing is backfilled by either (docs/operations.md)."""

import subprocess
import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from accounts.models import TelegramAccount
from config.celery_app import app
from config.storage import object_store_parse
from core import task_names
from core.models import RunStatus
from ingestion.models import IngestionRun, SkippedPackage
from ingestion.services import skipped_package_retry
from ingestion.tasks import ingestion_run_execute
from packages.models import MetadataStatus, Package, PackageFile, RawFile
from telegram.sandbox.world import World
from tests.support.ingestion import READER, READER_B, WRITER, uploaded_names, wait_until_over, world
from tests.support.processes import purge_queues, start_celery_worker, stop_workers

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

SETS = [
    {"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 300_000}]}},
    {"id": 12, "document": {"name": "tower.zip", "archive": [{"path": "tower/base.stl", "size": 200_000}]}},
    {
        "id": 13,
        "document": {
            "name": "castle.7z",
            "archive": [{"path": "castle/keep.stl", "size": 400_000}, {"path": "castle/wall.stl", "size": 2000}],
            "volume_size": 131_072,
        },
    },
    {"id": 20, "document": {"name": "bust.stl", "size": 50_000, "seed": 3}},
]
EXPECTED_PACKAGES = {"dragon.zip", "tower.zip", "castle.7z.001", "bust.stl"}


def machine_start(name: str, tmp_path, storage_url: str) -> subprocess.Popen:
    """One machine's worker: its own var folder (staging, media), the shared services and object store."""
    var = tmp_path / name
    var.mkdir(parents=True, exist_ok=True)
    return start_celery_worker(
        tmp_path,
        queues="ingest,default",
        name=name,
        STORAGE_URL=storage_url,
        STASHCAST_VAR_DIR=str(var),
        MEDIA_ROOT=str(var / "media"),
        INGEST_STAGING_DIR=str(var / "staging"),
        INGEST_SKIP_RECENT_SCAN_WINDOW_SECONDS="0",  # runs here come seconds apart, as if minutes
    )


def local_files(tmp_path, name: str) -> list[str]:
    """Files left on a machine's own disk (its staging and media folders)."""
    var = tmp_path / name
    return [str(path.relative_to(var)) for path in var.rglob("*") if path.is_file() and path.parent != var]


def bucket_keys(storage_url: str) -> set[str]:
    store = object_store_parse(storage_url)
    listed = store.client().list_objects_v2(Bucket=store.bucket).get("Contents", [])
    return {item["Key"] for item in listed}


def reader_downloads(phone: str) -> int:
    return World(settings.SANDBOX_PATH).stats()["calls"].get(phone, {}).get("upload.getFile", 0)


def wait_for(predicate, *, what: str, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def test_two_machines_ingest_every_set_once(ingest_world, object_store, tmp_path):
    accounts = [
        {"phone": READER, "first_name": "Reader A", "code": "12345"},
        {"phone": READER_B, "first_name": "Reader B", "code": "12345"},
        {"phone": WRITER, "first_name": "Writer", "code": "12345"},
    ]
    ingest_world(world(messages=SETS, accounts=accounts))  # both readers read the same channel
    purge_queues()
    runs = [
        IngestionRun.objects.create(account=account, trigger="manual")
        for account in TelegramAccount.objects.exclude(phone=WRITER)
    ]
    for run in runs:
        for _ in range(2):  # at-least-once delivery
            ingestion_run_execute.apply_async(args=[run.pk])
    machines = [machine_start(name, tmp_path, object_store) for name in ("machine-a", "machine-b")]
    try:
        wait_until_over([run.pk for run in runs])
    finally:
        stop_workers(machines)

    for run in IngestionRun.objects.filter(pk__in=[run.pk for run in runs]):
        assert run.status in (RunStatus.SUCCESS, RunStatus.PARTIAL), run.error
    names = uploaded_names()
    assert len(names) == len(set(names)), f"uploaded twice: {names}"
    assert {package.file_name for package in Package.objects.all()} == EXPECTED_PACKAGES
    assert Package.objects.exclude(metadata_status=MetadataStatus.COMPLETE).count() == 0
    assert bucket_keys(object_store) == {raw.object.name for raw in RawFile.objects.all()}
    assert local_files(tmp_path, "machine-a") == local_files(tmp_path, "machine-b") == []


def test_a_set_fetched_on_one_machine_is_uploaded_and_listed_by_the_other(ingest_world, object_store, tmp_path):
    # The first set's upload fails on machine A (the first try and every retry); the second goes through.
    faults = [{"op": "upload", "error": "network", "times": settings.INGEST_TRANSIENT_RETRIES + 1}]
    loaded = ingest_world(world(messages=SETS[2:4], faults=faults))
    purge_queues()
    first = IngestionRun.objects.create(account=TelegramAccount.objects.get(phone=READER), trigger="manual")
    ingestion_run_execute.apply_async(args=[first.pk])
    machine_a = machine_start("machine-a", tmp_path, object_store)
    try:
        wait_until_over([first.pk])
    finally:
        stop_workers([machine_a])
    first.refresh_from_db()
    skipped = SkippedPackage.objects.get()
    assert (skipped.file_name, skipped.reason) == ("castle.7z.001", "UPLOAD_FAILED"), first.error
    bust = Package.objects.get(file_name="bust.stl")
    # Machine A "crashed" between bust.stl's upload and its listing: the stub waits for a backfill.
    PackageFile.objects.filter(package=bust).delete()
    Package.objects.filter(pk=bust.pk).update(
        metadata_status=MetadataStatus.PENDING, file_count=0, created_at=timezone.now() - timedelta(hours=1)
    )
    loaded.stats_reset()

    # The operator presses Retry; only machine B is up, with nothing of A's on its disk.
    second = skipped_package_retry(skipped=skipped)  # runs the set's channel now
    assert second is not None
    app.send_task(task_names.INGESTION_RECOVER, queue="default")
    machine_b = machine_start("machine-b", tmp_path, object_store)
    try:
        wait_until_over([second.pk])
        wait_for(lambda: Package.objects.get(pk=bust.pk).metadata_status != MetadataStatus.PENDING, what="the backfill")
    finally:
        stop_workers([machine_b])

    second.refresh_from_db()
    # What the run saw, and machine B's log, should it ingest nothing.
    seen = f"{second.error} duplicates={second.duplicates} skipped={list(SkippedPackage.objects.values('reason'))}"
    log = (tmp_path / "machine-b.log").read_text()[-3000:]
    assert (second.status, second.ingested) == (RunStatus.SUCCESS, 1), f"{seen}\n{log}"
    assert second.worker_id != first.worker_id
    assert reader_downloads(READER) == 0, "machine B read A's download from the object store, not Telegram"
    castle = Package.objects.get(file_name="castle.7z.001")
    assert sorted(castle.files.values_list("path", flat=True)) == ["castle/keep.stl", "castle/wall.stl"]
    names = uploaded_names()
    assert sorted(names) == sorted({*castle.dest_part_names, *Package.objects.get(pk=bust.pk).dest_part_names})
    bust.refresh_from_db()
    assert (bust.metadata_status, bust.file_count) == (MetadataStatus.COMPLETE, 1), bust.metadata_error
    assert local_files(tmp_path, "machine-b") == []
