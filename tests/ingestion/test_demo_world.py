"""`make run` loads the demo world: it must ingest on its own and leave something to Retry."""

import io
import json

import pytest
from django.conf import settings
from django.core.management import call_command

from accounts.models import TelegramAccount
from ingestion.models import SkippedPackage, SkipReason
from ingestion.services import ingestion_cycle_start, skipped_package_retry
from packages.models import MetadataStatus, Package
from tests.ingestion.conftest import run_cycle

pytestmark = pytest.mark.django_db

DEMO = settings.BASE_DIR / "telegram" / "sandbox" / "worlds" / "demo.json"


@pytest.fixture(autouse=True)
def storage(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"
    settings.SANDBOX_PATH = tmp_path / "sandbox"


def test_the_demo_world_ingests_and_leaves_skipped_packages_to_retry():
    call_command("sandbox_load", str(DEMO), "--authorize", stdout=io.StringIO())
    readers = [account.phone for account in TelegramAccount.objects.filter(channel_maps__role="reader").distinct()]
    assert len(ingestion_cycle_start(trigger="schedule")) == len(readers) >= 2

    for phone in readers:
        run_cycle(phone)

    names = set(Package.objects.values_list("file_name", flat=True))
    assert {"red-dragon.zip", "wyvern.7z", "hill-tiles.zip", "rover.stl", "goblin-camp.zip"} <= names
    assert Package.objects.filter(file_name="red-dragon.zip").count() == 1, "the repost is a duplicate"
    repack = Package.objects.get(file_name="Red Dragon (fan repack).7z")
    assert (repack.likely_same_as.file_name, repack.likely_same_overlap) == ("red-dragon.zip", 100)
    assert not Package.objects.filter(metadata_status=MetadataStatus.PENDING).exists()
    reasons = dict(SkippedPackage.objects.values_list("file_name", "reason"))
    assert reasons == {
        "orc-warband.part1.rar": SkipReason.MISSING_PART,
        "siege-engine.zip": SkipReason.DOWNLOAD_FAILED,
        "griffin-nest.7z.001": SkipReason.WAITING_FOR_VOLUMES,  # its other volumes arrive a minute apart
    }
    assert "griffin-nest.7z.001" not in names

    skipped_package_retry(skipped=SkippedPackage.objects.get(file_name="siege-engine.zip"))
    run_cycle("+15550000002")
    assert Package.objects.filter(file_name="siege-engine.zip").exists()

    out = io.StringIO()
    call_command("sandbox_dump", "3001", "--json", stdout=out)
    uploaded = [m["document"]["name"] for m in json.loads(out.getvalue())["messages"] if m["document"]]
    assert len(uploaded) == len(set(uploaded))
