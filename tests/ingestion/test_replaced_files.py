"""A file replaced under its message (an edit) is a new file: never spliced onto what was downloaded of the old
one, and the set is taken again whole from the new file."""

import hashlib
import io
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from ingestion.models import SkippedPackage, SkipReason
from packages.models import Package
from telegram.records import PART_SIZE
from telegram.sandbox.world import World
from tests.support.ingestion import SOURCE, run_cycle, uploads, world

pytestmark = pytest.mark.django_db

SIZE = 12 * PART_SIZE


@pytest.fixture(autouse=True)
def staging_in_tmp(settings, tmp_path):
    settings.INGEST_STAGING_DIR = tmp_path / "staging"
    settings.INGEST_SET_SETTLE_SECONDS = 0


def partials() -> list[Path]:
    folder = Path(settings.INGEST_STAGING_DIR) / "partial"
    return sorted(folder.iterdir()) if folder.is_dir() else []


def sha256_of(sandbox: World, message_id: int) -> str:
    return hashlib.sha256(sandbox.message_bytes(SOURCE, message_id)).hexdigest()


def test_a_file_replaced_mid_download_is_taken_whole_from_its_new_bytes(ingest_world):
    data = world(messages=[{"id": 10, "document": {"name": "bust.stl", "size": SIZE, "seed": 4}}])
    # The post is edited while its sixth part is asked for: the old file's reference dies with it.
    data["faults"] = [{"op": "download", "error": "replace_document", "chat": SOURCE, "message": 10, "after": 5}]
    ingest_world(data)
    sandbox = World(settings.SANDBOX_PATH)
    old_document_id = sandbox.message(SOURCE, 10)["document_id"]

    first = run_cycle()

    assert not Package.objects.exists() and not uploads(), "nothing spliced from two files is kept"
    skipped = SkippedPackage.objects.get()
    assert skipped.reason == SkipReason.WAITING_FOR_VOLUMES and skipped.attempt_count == 0
    assert "was replaced" in skipped.error_message
    assert first.bytes_downloaded < SIZE
    assert not [path for path in partials() if path.name.endswith(f"-{old_document_id}")], "the old partial is dropped"

    second = run_cycle()

    assert second.ingested == 1, second.error
    new_hash = sha256_of(sandbox, 10)
    assert Package.objects.get().content_hash == new_hash
    assert [upload["document"]["sha256"] for upload in uploads()] == [new_hash]
    assert not SkippedPackage.objects.exists()


def test_a_volume_replaced_between_cycles_is_downloaded_from_zero(ingest_world, settings):
    settings.INGEST_TRANSIENT_RETRIES = 0
    data = world(messages=[{"id": 10, "document": {"name": "bust.stl", "size": SIZE, "seed": 4}}])
    data["faults"] = [{"op": "download", "error": "network", "after": 6, "times": 1}]
    ingest_world(data)
    sandbox = World(settings.SANDBOX_PATH)
    assert run_cycle().skipped == 1
    assert sum(path.stat().st_size for path in partials()) == 6 * PART_SIZE, "half the old file is kept to resume"

    call_command("sandbox_replace", str(SOURCE), "10", stdout=io.StringIO())
    sandbox.stats_reset()
    second = run_cycle()

    assert second.ingested == 1, second.error
    assert second.bytes_downloaded == SIZE, "the new file from its first byte"
    assert Package.objects.get().content_hash == sha256_of(sandbox, 10)
    assert [upload["document"]["sha256"] for upload in uploads()] == [sha256_of(sandbox, 10)]
