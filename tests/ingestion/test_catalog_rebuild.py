"""The destination describes itself: every upload carries the catalog line, and the catalog comes back from
the destination channel alone. One ingestion serves every test here (built once: see tests/support/once.py);
a catalog that needs another world is in test_catalog_rebuild_in_full.py."""

import pytest
from django.core.management import call_command

from core.models import Notification
from ingestion.models import Channel
from packages.catalog import catalog_line
from packages.destination_reads import RANGE_BYTES
from packages.models import Package
from tests.support.archives import RAR_FIXTURES
from tests.support.ingestion import (
    DESTINATION,
    SOURCE,
    catalog_rebuild,
    dump,
    package_listing,
    run_cycle,
    uploads,
    world,
    world_authorize_load,
)

pytestmark = pytest.mark.django_db

FIELDS = [
    "content_hash",
    "file_name",
    "file_size",
    "archive_type",
    "is_multipart",
    "part_count",
    "volume_names",
    "source_chat_id",
    "source_message_id",
    "source_message_ids",
    "source_topic_id",
    "source_topic_title",
    "destination_chat_id",
    "dest_message_ids",
    "dest_part_names",
    "creator",
    "tags",
]
TOPICS = [{"id": 1, "title": "General"}, {"id": 42, "title": "Dragons"}]
MESSAGES = [
    {"id": 11, "topic": 42, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}},
    {
        "id": 20,
        "document": {"name": "big.7z", "archive": [{"path": "a.stl", "size": 300_000}], "volume_size": 131_072},
    },
    {"id": 30, "document": {"name": "[Maker] huge.zip", "size": 250_000, "seed": 5}},
    {"id": 31, "document": {"name": "bust.stl", "size": 4000, "seed": 3}},
    {"id": 40, "document": {"name": "subdirs.rar", "file": str(RAR_FIXTURES / "rar5-subdirs.rar")}},
    *(
        {"id": 40 + number, "document": {"name": f"vols.part{number}.rar", "file": str(RAR_FIXTURES / name)}}
        for number, name in ((1, "rar5-vols.part1.rar"), (2, "rar5-vols.part2.rar"), (3, "rar5-vols.part3.rar"))
    ),
]
LISTED = {"dragon.zip", "big.7z.001", "bust.stl", "subdirs.rar", "vols.part1.rar"}


def build_once() -> dict:
    world_authorize_load(world(messages=MESSAGES, forum=True, topics=TOPICS, limits={"upload_max_bytes": 100_000}))
    Channel.objects.filter(chat__telegram_id=SOURCE).update(category="Minis")
    run = run_cycle()
    assert run.ingested == 6, run.error
    return {package.content_hash: _fields(package) for package in Package.objects.all()}


@pytest.fixture
def ingested(built_copy):
    """The packages' catalog fields by content hash, as ingestion wrote them (once for the module)."""
    return built_copy


def _fields(package: Package) -> dict:
    return {name: getattr(package, name) for name in FIELDS}


def test_every_upload_carries_the_catalog_line(ingested):
    huge = Package.objects.get(file_name="[Maker] huge.zip")
    captions = {m["id"]: m["text"] for m in uploads()}

    assert len(huge.dest_message_ids) == 3, "uploaded as three byte-split parts"
    for number, message_id in enumerate(huge.dest_message_ids, start=1):
        assert captions[message_id] == catalog_line(
            content_hash=huge.content_hash,
            part=number,
            parts=3,
            source_chat_id=SOURCE,
            source_message_id=30,
            topic_id=1,
        )
    dragon = Package.objects.get(file_name="dragon.zip")
    assert captions[dragon.dest_message_ids[0]].endswith(f"part=1/1 src={SOURCE}/11 topic=42")


def test_a_wiped_catalog_is_rebuilt_from_the_destination_alone_with_its_listings(ingested):
    listings = {package.file_name: package_listing(package) for package in Package.objects.all()}
    assert {name for name, listing in listings.items() if listing[2]} == LISTED
    Package.objects.all().delete()

    out = catalog_rebuild()

    rebuilt = {package.content_hash: _fields(package) for package in Package.objects.all()}
    assert rebuilt == ingested
    assert {package.file_name: package_listing(package) for package in Package.objects.all()} == listings
    assert "6 packages added" in out
    assert "6 listings read in place" in out and "read in full" not in out
    assert "vols.part1.rar: 2 files (" in out, "a RAR set walked in place, volume by volume"
    note = Notification.objects.get(type="catalog_rebuilt")
    assert "6 packages added" in note.message and note.severity == "info"


def test_a_rebuild_reads_listings_in_place_not_whole_files(ingested):
    big_size = Package.objects.get(file_name="big.7z.001").file_size
    Package.objects.all().delete()

    out = catalog_rebuild()

    read_in_place = {
        line.split("] ", 1)[1].split(": ")[0]: int(line.rsplit("(", 1)[1].split(" bytes")[0].replace(",", ""))
        for line in out.splitlines()
        if line.endswith("bytes read in place)")
    }
    assert set(read_in_place) == LISTED | {"[Maker] huge.zip"}
    # The 7z's start header and its end header: two windows of RANGE_BYTES at most, of a 300 kB set whose
    # volumes went up as six documents.
    assert read_in_place["big.7z.001"] <= 2 * RANGE_BYTES < big_size / 2
    assert read_in_place["bust.stl"] == 0, "a model's listing is its name and size"
    assert read_in_place["dragon.zip"] < 1000, "the whole small zip is its directory"


def test_a_rebuild_repairs_moved_messages_and_a_second_one_changes_nothing(ingested):
    dragon = Package.objects.get(file_name="dragon.zip")
    right = list(dragon.dest_message_ids)
    Package.objects.filter(pk=dragon.pk).update(dest_message_ids=[999_999], reupload_needed=True)

    assert "1 repaired, 5 already right" in catalog_rebuild()
    dragon.refresh_from_db()
    assert (dragon.dest_message_ids, dragon.reupload_needed) == (right, False)
    assert "0 packages added, 0 repaired, 6 already right" in catalog_rebuild()
    assert Package.objects.count() == 6


def test_documents_without_a_line_and_missing_parts_are_reported_not_invented(ingested):
    huge = Package.objects.get(file_name="[Maker] huge.zip")
    call_command("sandbox_post", str(DESTINATION), "--document", "stray.zip", "--size", "100", "--seed", "1")
    call_command("sandbox_delete", str(DESTINATION), str(huge.dest_message_ids[1]))
    Package.objects.all().delete()

    out = catalog_rebuild()

    assert "5 packages added" in out and "1 with parts missing" in out and "1 documents carry no catalog line" in out
    assert f"{huge.content_hash[:12]}…: part 2 of 3 missing" in out
    assert not Package.objects.filter(content_hash=huge.content_hash).exists()
    assert Notification.objects.get(type="catalog_rebuilt").severity == "warning"
    assert {m["document"]["name"] for m in dump(DESTINATION)["messages"] if m["document"]} >= {"stray.zip"}


def test_a_listing_telegram_will_not_give_is_reported_and_read_by_the_next_rebuild(ingested, settings):
    from telegram.sandbox.world import World

    dragon = Package.objects.get(file_name="dragon.zip")
    listed = sorted(dragon.files.values_list("path", flat=True))
    Package.objects.all().delete()
    World(settings.SANDBOX_PATH).fault_add(
        {"op": "download", "error": "network", "chat": DESTINATION, "message": dragon.dest_message_ids[0]}
    )

    first = catalog_rebuild()

    dragon = Package.objects.get(file_name="dragon.zip")
    assert "1 listings not read" in first and "dragon.zip: listing not read (" in first
    assert dragon.file_count == 0 and dragon.metadata_error.startswith("Rebuilt from the destination channel")
    assert "Telegram could not be reached" in dragon.metadata_error, "the taxonomy's words"

    second = catalog_rebuild()

    dragon.refresh_from_db()
    assert "1 listings read in place" in second and "listings not read" not in second
    assert sorted(dragon.files.values_list("path", flat=True)) == listed
