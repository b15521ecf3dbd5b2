"""`make run` loads the demo world: it must ingest on its own and leave something to Retry."""

import io
import json
import time

import pytest
from django.conf import settings
from django.core.management import call_command

from accounts.models import Chat, TelegramAccount
from ingestion.audit import catalog_audit_run
from ingestion.models import SkippedPackage, SkipReason
from ingestion.services import catalog_rebuild_from_destination, ingestion_cycle_start, skipped_package_retry
from packages import sending
from packages.models import Collection, MetadataStatus, Package
from telegram.sandbox.world import World
from tests.support.ingestion import run_cycle

pytestmark = [pytest.mark.django_db, pytest.mark.large]

DEMO = settings.BASE_DIR / "telegram" / "sandbox" / "worlds" / "demo.json"


@pytest.fixture(autouse=True)
def sandbox_in_tmp(settings, tmp_path):
    settings.SANDBOX_PATH = tmp_path / "sandbox"


@pytest.fixture
def world_clock(monkeypatch):
    """The sandbox server's clock, held still until the test moves it: the griffin's later volumes arrive when the
    test says, however long the cycles take on a loaded machine."""
    start = time.time()

    def move_to(seconds_after_start: float) -> None:
        monkeypatch.setattr("telegram.sandbox.world.clock", lambda: start + seconds_after_start)

    move_to(0)
    return move_to


def test_the_demo_world_ingests_and_leaves_skipped_packages_to_retry(world_clock):
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

    # Previews: a photo posted next to the archive, the first photo of an album, else an image inside.
    preview_of = {package.file_name: package.preview for package in Package.objects.select_related("preview")}
    assert (preview_of["red-dragon.zip"].source, preview_of["red-dragon.zip"].source_message_id) == ("photo", 11)
    assert (preview_of["sea-serpent-body.zip"].source, preview_of["sea-serpent-body.zip"].source_message_id) == (
        "photo",
        60,
    )
    assert preview_of["castle-walls.zip"].path == "castle/renders/walls-front.jpg"
    assert preview_of["wyvern.7z"].path == "wyvern/renders/wyvern-front.png"
    # Neither a photo nor a picture: the main model, drawn (a model posted as it is, too).
    assert (preview_of["hill-tiles.zip"].source, preview_of["hill-tiles.zip"].path) == (
        "render",
        "hill-tiles/hill_a.stl",
    )
    assert (preview_of["rover.stl"].source, preview_of["rover.stl"].path) == ("render", "rover.stl")
    wyvern = Package.objects.get(file_name="wyvern.7z")
    assert wyvern.previews.filter(source="render", path="wyvern/wyvern.3mf").exists(), "an extra view"
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

    world_clock(120)  # the griffin's second and third volumes are posted a minute apart
    for phone in readers:
        run_cycle(phone)
    griffin = Package.objects.get(file_name__startswith="griffin-nest.7z")
    assert len(griffin.volume_names) == 3
    assert not SkippedPackage.objects.filter(file_name="griffin-nest.7z.001").exists(), "no longer waiting"


def test_the_demo_sends_a_package_audits_and_rebuilds_from_its_destination():
    call_command("sandbox_load", str(DEMO), "--authorize", stdout=io.StringIO())
    for phone in ("+15550000001", "+15550000002"):
        run_cycle(phone)
    fields = ["content_hash", "file_name", "file_size", "volume_names", "source_message_ids", "dest_message_ids"]
    before = sorted(Package.objects.values_list(*fields))
    # A picture inside or a model drawn comes back from the kept raw file; a photo posted beside it does not.
    drawn = sorted(
        Package.objects.exclude(preview__source="photo")
        .filter(preview__isnull=False)
        .values_list("file_name", "preview__source", "preview__path")
    )
    assert {"render", "archive"} <= {source for _, source, _ in drawn}

    wyvern = Package.objects.get(file_name="wyvern.7z")
    send = sending.package_send_create(packages=[wyvern], chat=Chat.objects.get(title="Operators' Inbox"))
    assert sending.package_send_execute(send_id=send.pk) == "success"
    to_dana = sending.package_send_create(packages=[wyvern], chat=Chat.objects.get(username="dana_prints"))
    assert sending.package_send_execute(send_id=to_dana.pk) == "success"
    dana = World(settings.SANDBOX_PATH).chat_dump(to_dana.chat.telegram_id)["messages"]
    assert [m["document"]["name"] for m in dana if m["document"]] == wyvern.dest_part_names, "Dana holds the parts"
    audit = catalog_audit_run()
    assert (audit.missing, audit.orphans, audit.error) == ([], [], "")
    assert {row["title"] for row in audit.coverage} >= {"STL Vault", "Print Drops"}

    Package.objects.all().delete()
    result = catalog_rebuild_from_destination()
    assert result.created == len(before) and not result.incomplete
    assert sorted(Package.objects.values_list(*fields)) == before
    assert (
        sorted(
            Package.objects.filter(file_name__in=[name for name, _, _ in drawn]).values_list(
                "file_name", "preview__source", "preview__path"
            )
        )
        == drawn
    )

    kept = {package.pk: package.preview_id for package in Package.objects.all()}
    assert catalog_rebuild_from_destination().created == 0, "a second rebuild repairs, adds nothing"
    assert {package.pk: package.preview_id for package in Package.objects.all()} == kept, "previews kept"
