"""Ingestion with raw files in an object store (the S3 server `make test` starts): the pipeline keeps each
download there, a retry reads the kept copy back instead of downloading it again, and a damaged copy is
refused and downloaded again."""

import pytest

from config.storage import object_store_parse
from ingestion.models import SkippedPackage
from packages.models import MetadataStatus, Package, RawFile
from telegram.sandbox.world import World
from tests.support.ingestion import READER, run_cycle, uploads, world

pytestmark = pytest.mark.django_db

ZIP = {"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 300_000}]}}
SEVEN = {
    "id": 12,
    "document": {
        "name": "castle.7z",
        "archive": [{"path": "castle/keep.stl", "size": 400_000}, {"path": "castle/wall.stl", "size": 2000}],
        "volume_size": 131_072,
    },
}


@pytest.fixture(autouse=True)
def folders(settings, tmp_path, object_store):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"
    settings.INGEST_SKIP_RECENT_SCAN_WINDOW_SECONDS = 0  # cycles here come seconds apart, as if minutes


def bucket_keys(object_store) -> set[str]:
    store = object_store_parse(object_store)
    listed = store.client().list_objects_v2(Bucket=store.bucket).get("Contents", [])
    return {item["Key"] for item in listed}


def downloads(settings) -> int:
    return World(settings.SANDBOX_PATH).stats()["calls"].get(READER, {}).get("upload.getFile", 0)


def test_every_raw_file_is_kept_in_the_bucket_and_nothing_stays_on_the_local_disk(
    ingest_world, object_store, settings, tmp_path
):
    ingest_world(world(messages=[ZIP, SEVEN]))

    run = run_cycle()

    assert (run.status, run.ingested) == ("success", 2), run.error
    raws = RawFile.objects.all()
    assert raws.count() == 1 + Package.objects.get(file_name="castle.7z.001").part_count
    assert bucket_keys(object_store) == {raw.object.name for raw in raws}
    for package in Package.objects.all():
        assert package.metadata_status == MetadataStatus.COMPLETE, package.metadata_error
    assert not (tmp_path / "media").exists()
    assert [path for path in (tmp_path / "staging").rglob("*") if path.is_file()] == []


def test_a_failed_upload_is_retried_from_the_kept_copy_without_downloading_again(ingest_world, settings):
    faults = [{"op": "upload", "error": "network", "times": settings.INGEST_TRANSIENT_RETRIES + 1}]
    loaded = ingest_world(world(messages=[SEVEN], faults=faults))
    first = run_cycle()
    assert SkippedPackage.objects.get().reason == "UPLOAD_FAILED", first.error
    assert downloads(settings) > 0
    loaded.stats_reset()

    second = run_cycle()

    assert (second.status, second.ingested) == ("success", 1), second.error
    assert downloads(settings) == 0, "the volumes came from the object store, not from Telegram"
    assert len(uploads()) == Package.objects.get().part_count
    assert Package.objects.get().files.count() == 2


def test_a_kept_copy_that_changed_in_the_bucket_is_refused_and_downloaded_again(ingest_world, object_store, settings):
    faults = [{"op": "upload", "error": "network", "times": settings.INGEST_TRANSIENT_RETRIES + 1}]
    ingest_world(world(messages=[ZIP], faults=faults))
    run_cycle()
    raw = RawFile.objects.get()
    store = object_store_parse(object_store)
    store.client().put_object(Bucket=store.bucket, Key=raw.object.name, Body=b"not the archive")

    refused = run_cycle()

    skipped = SkippedPackage.objects.get()
    assert (refused.ingested, skipped.reason) == (0, "DOWNLOAD_FAILED")
    assert "the kept copy of dragon.zip is 15 bytes" in skipped.error_message
    raw.refresh_from_db()
    assert not raw.object and raw.purged_at is not None, "forgotten, so the next try downloads it"

    again = run_cycle()

    assert (again.status, again.ingested) == ("success", 1), again.error
    assert [message["document"]["name"] for message in uploads()] == ["dragon.zip"]
