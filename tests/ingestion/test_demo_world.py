"""`make run` loads the demo world: it must ingest on its own and leave something to Retry."""

import io
import json

import pytest
from django.conf import settings
from django.core.management import call_command

from accounts.models import TelegramAccount
from ingestion.models import SkippedPackage, SkipReason
from ingestion.services import ingestion_cycle_start, skipped_package_retry
from packages.models import Collection, MetadataStatus, Package
from tests.ingestion.conftest import run_cycle

pytestmark = pytest.mark.django_db

DEMO = settings.BASE_DIR / "telegram" / "sandbox" / "worlds" / "demo.json"


@pytest.fixture(autouse=True)
def sandbox_in_tmp(settings, tmp_path):
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
    assert not Package.objects.filter(metadata_status=MetadataStatus.PENDING).exists()
    reasons = dict(SkippedPackage.objects.values_list("file_name", "reason"))
    assert reasons == {
        "orc-warband.part1.rar": SkipReason.MISSING_PART,
        "siege-engine.zip": SkipReason.DOWNLOAD_FAILED,
        "griffin-nest.7z.001": SkipReason.WAITING_FOR_VOLUMES,  # its other volumes arrive a minute apart
    }
    assert "griffin-nest.7z.001" not in names

    # Previews: a photo posted next to the archive, the first photo of an album, else an image inside.
    preview_of = {package.file_name: package.preview for package in Package.objects.select_related("preview")}
    assert (preview_of["red-dragon.zip"].source, preview_of["red-dragon.zip"].source_message_id) == ("photo", 11)
    assert (preview_of["sea-serpent-body.zip"].source, preview_of["sea-serpent-body.zip"].source_message_id) == (
        "photo",
        60,
    )
    assert preview_of["castle-walls.zip"].path == "castle/renders/walls-front.jpg"
    assert preview_of["wyvern.7z"].path == "wyvern/renders/wyvern-front.png"
    # Collections: an album, a reply chain, two versions of one model.
    grouped = {
        collection.rule: sorted(collection.packages.values_list("file_name", flat=True))
        for collection in Collection.objects.all()
    }
    assert grouped == {
        "album": ["sea-serpent-body.zip", "sea-serpent-tail.zip"],
        "reply": ["castle-gate.zip", "castle-towers.7z", "castle-walls.zip"],
        "base_name": ["hill-tiles-v2.zip", "hill-tiles.zip"],
    }

    skipped_package_retry(skipped=SkippedPackage.objects.get(file_name="siege-engine.zip"))
    run_cycle("+15550000002")
    assert Package.objects.filter(file_name="siege-engine.zip").exists()

    out = io.StringIO()
    call_command("sandbox_dump", "3001", "--json", stdout=out)
    uploaded = [m["document"]["name"] for m in json.loads(out.getvalue())["messages"] if m["document"]]
    assert len(uploaded) == len(set(uploaded))
