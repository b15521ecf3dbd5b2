"""The destination describes itself: every upload carries the catalog line, and the catalog comes back from
the destination channel alone."""

import io

import pytest
from django.core.management import call_command

from core.models import Notification
from ingestion.models import Channel
from packages.catalog import REBUILT_NOTE, catalog_line
from packages.models import MetadataStatus, Package
from tests.ingestion.conftest import DESTINATION, SOURCE, run_cycle, world
from tests.ingestion.test_pipeline import dump, uploads

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
]


@pytest.fixture(autouse=True)
def storage(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"


@pytest.fixture
def ingested(ingest_world):
    data = world(messages=MESSAGES, forum=True, topics=TOPICS, limits={"upload_max_bytes": 100_000})
    ingest_world(data)
    Channel.objects.filter(chat__telegram_id=SOURCE).update(category="Minis")
    run = run_cycle()
    assert run.ingested == 4, run.error
    return {package.content_hash: _fields(package) for package in Package.objects.all()}


def _fields(package: Package) -> dict:
    return {name: getattr(package, name) for name in FIELDS}


def _rebuild() -> str:
    out = io.StringIO()
    call_command("catalog_rebuild", stdout=out)
    return out.getvalue()


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


def test_a_wiped_catalog_is_rebuilt_from_the_destination_alone(ingested):
    Package.objects.all().delete()

    out = _rebuild()

    rebuilt = {package.content_hash: _fields(package) for package in Package.objects.all()}
    assert rebuilt == ingested
    assert "4 packages added" in out
    assert set(Package.objects.values_list("metadata_status", "metadata_error")) == {
        (MetadataStatus.UNAVAILABLE, REBUILT_NOTE)
    }
    note = Notification.objects.get(type="catalog_rebuilt")
    assert "4 packages added" in note.message and note.severity == "info"


def test_a_rebuild_repairs_moved_messages_and_a_second_one_changes_nothing(ingested):
    dragon = Package.objects.get(file_name="dragon.zip")
    right = list(dragon.dest_message_ids)
    Package.objects.filter(pk=dragon.pk).update(dest_message_ids=[999_999], reupload_needed=True)

    assert "1 repaired, 3 already right" in _rebuild()
    dragon.refresh_from_db()
    assert (dragon.dest_message_ids, dragon.reupload_needed) == (right, False)
    assert "0 packages added, 0 repaired, 4 already right" in _rebuild()
    assert Package.objects.count() == 4


def test_documents_without_a_line_and_missing_parts_are_reported_not_invented(ingested):
    huge = Package.objects.get(file_name="[Maker] huge.zip")
    call_command("sandbox_post", str(DESTINATION), "--document", "stray.zip", "--size", "100", "--seed", "1")
    call_command("sandbox_delete", str(DESTINATION), str(huge.dest_message_ids[1]))
    Package.objects.all().delete()

    out = _rebuild()

    assert "3 packages added" in out and "1 with parts missing" in out and "1 documents carry no catalog line" in out
    assert f"{huge.content_hash[:12]}…: part 2 of 3 missing" in out
    assert not Package.objects.filter(content_hash=huge.content_hash).exists()
    assert Notification.objects.get(type="catalog_rebuilt").severity == "warning"
    assert {m["document"]["name"] for m in dump(DESTINATION)["messages"] if m["document"]} >= {"stray.zip"}
