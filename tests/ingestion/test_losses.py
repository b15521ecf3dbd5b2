"""Ways ingestion could lose or loop work, each shown not to."""

from datetime import timedelta

import pytest
from django.utils import timezone

from ingestion.models import Channel, SkippedPackage
from packages.models import Package, RawFile
from packages.services import raw_files_purge
from tests.ingestion.conftest import SOURCE, run_cycle, world
from tests.ingestion.test_pipeline import uploads

pytestmark = pytest.mark.django_db

ZIP = {"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}}


@pytest.fixture(autouse=True)
def storage(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"


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
