"""A post already ingested whose file an edit replaced is taken again as new content (ingestion.edits): the
same bytes make no new package, a set whose volume was replaced is taken again whole, and the check costs one
request a cycle, only for a channel with packages from recent posts."""

import hashlib
import io

import pytest
from django.core.management import call_command

from ingestion.fetching import content_hash_of
from ingestion.models import ChannelScan, ScanAction
from packages.models import Package
from telegram.records import PART_SIZE
from telegram.sandbox.world import World
from tests.support.ingestion import SOURCE, run_cycle, uploads, world

pytestmark = pytest.mark.django_db

SIZE = 3 * PART_SIZE
YEARS = 10 * 365 * 24 * 3600  # world posts are dated 2024: every one of them is recent enough to be read again


@pytest.fixture(autouse=True)
def staging_in_tmp(settings, tmp_path):
    settings.INGEST_STAGING_DIR = tmp_path / "staging"
    settings.INGEST_SET_SETTLE_SECONDS = 0
    settings.INGEST_SKIP_RECENT_SCAN_WINDOW_SECONDS = 0  # every cycle looks at the channel


def sha256_of(sandbox: World, message_id: int) -> str:
    return hashlib.sha256(sandbox.message_bytes(SOURCE, message_id)).hexdigest()


def replace(message_id: int) -> None:
    call_command("sandbox_replace", str(SOURCE), str(message_id), stdout=io.StringIO())


def test_a_post_edited_to_hold_another_file_becomes_a_new_package(ingest_world, settings):
    settings.INGEST_EDIT_WINDOW_SECONDS = YEARS
    ingest_world(world(messages=[{"id": 10, "document": {"name": "bust.stl", "size": SIZE, "seed": 4}}]))
    sandbox = World(settings.SANDBOX_PATH)
    assert run_cycle().ingested == 1
    old = Package.objects.get()

    replace(10)
    second = run_cycle()

    assert second.ingested == 1, second.error
    new = Package.objects.exclude(pk=old.pk).get()
    assert new.content_hash == sha256_of(sandbox, 10) != old.content_hash
    assert (new.source_message_id, new.telegram_document_ids) == (10, [sandbox.message(SOURCE, 10)["document_id"]])
    old.refresh_from_db()
    assert old.source_message_id is None, "the old package leaves the post to the new file's"
    assert old.source_message_ids == [10], "and still says where it came from"
    assert [upload["document"]["sha256"] for upload in uploads()] == [old.content_hash, new.content_hash]

    third = run_cycle()

    assert (third.ingested, third.duplicates) == (0, 0), "an edit is taken once"
    assert len(uploads()) == 2


def test_the_same_bytes_under_a_new_document_make_no_new_package(ingest_world, settings):
    settings.INGEST_EDIT_WINDOW_SECONDS = YEARS
    spec = {"name": "bust.stl", "size": SIZE, "seed": 4}
    ingest_world(world(messages=[{"id": 10, "document": spec}]))
    sandbox = World(settings.SANDBOX_PATH)
    assert run_cycle().ingested == 1
    before = sha256_of(sandbox, 10)
    old_document = sandbox.message(SOURCE, 10)["document_id"]

    new_document = sandbox.message_replace(SOURCE, 10, dict(spec))
    assert new_document != old_document and sha256_of(sandbox, 10) == before
    second = run_cycle()

    assert (second.ingested, second.duplicates) == (0, 1), second.error
    package = Package.objects.get()
    assert package.source_message_id == 10
    assert package.telegram_document_ids == [old_document, new_document], "the new document dedupes for free"
    assert len(uploads()) == 1
    assert run_cycle().duplicates == 0, "known now: not downloaded again"


def test_a_set_whose_volume_was_replaced_is_taken_again_whole(ingest_world, settings):
    settings.INGEST_EDIT_WINDOW_SECONDS = YEARS
    messages = [
        {"id": 10, "document": {"name": "vols.part1.rar", "size": 1000, "seed": 1}},
        {"id": 11, "document": {"name": "vols.part2.rar", "size": 1000, "seed": 2}},
        {"id": 12, "document": {"name": "vols.part3.rar", "size": 500, "seed": 3}},
        {"id": 20, "document": {"name": "later.stl", "size": 800, "seed": 5}},
    ]
    ingest_world(world(messages=messages))
    sandbox = World(settings.SANDBOX_PATH)
    assert run_cycle().ingested == 2
    old = Package.objects.get(file_name="vols.part1.rar")

    replace(11)
    second = run_cycle()

    assert second.ingested == 1, second.error
    new = Package.objects.exclude(pk=old.pk).get(file_name="vols.part1.rar")
    assert new.part_count == 3 and new.source_message_ids == [10, 11, 12]
    assert new.content_hash == content_hash_of([sha256_of(sandbox, message_id) for message_id in (10, 11, 12)])
    assert new.telegram_document_ids == [sandbox.message(SOURCE, i)["document_id"] for i in (10, 11, 12)]
    assert [upload["document"]["name"] for upload in uploads()[-3:]] == [
        "vols.part1.rar",
        "vols.part2.rar",
        "vols.part3.rar",
    ], "the whole set again, in order"
    old.refresh_from_db()
    assert old.source_message_id is None
    assert Package.objects.get(file_name="later.stl").source_message_id == 20, "the rest of the channel is untouched"


def test_the_edit_check_costs_one_request_and_only_for_recent_posts(ingest_world, settings):
    settings.INGEST_EDIT_WINDOW_SECONDS = 2 * 24 * 3600
    ingest_world(world(messages=[{"id": 10, "document": {"name": "old.stl", "size": 800, "seed": 1}}]))
    assert run_cycle().ingested == 1

    idle = run_cycle()
    scan = ChannelScan.objects.get(run=idle)
    assert (scan.action, scan.requests) == (ScanAction.CHECK, 0), "a post from 2024 is past the window: no request"

    call_command("sandbox_post", str(SOURCE), "--document", "new.stl", "--size", "900", "--seed", "2")
    assert run_cycle().ingested == 1
    idle = run_cycle()
    scan = ChannelScan.objects.get(run=idle)
    assert (scan.action, scan.requests) == (ScanAction.CHECK, 1), "one page of recent documents, nothing more"
    assert (idle.ingested, idle.duplicates) == (0, 0)


def test_a_forum_post_edited_to_hold_another_file_is_taken_again_in_its_topic(ingest_world, settings):
    settings.INGEST_EDIT_WINDOW_SECONDS = YEARS
    topics = [{"id": 1, "title": "General"}, {"id": 42, "title": "Dragons"}]
    messages = [
        {"id": 3, "topic": 42, "document": {"name": "dragon.stl", "size": 700, "seed": 1}},
        {"id": 4, "topic": 1, "document": {"name": "tile.stl", "size": 600, "seed": 2}},
    ]
    ingest_world(world(messages=messages, forum=True, topics=topics))
    sandbox = World(settings.SANDBOX_PATH)
    assert run_cycle().ingested == 2

    replace(3)
    second = run_cycle()

    assert second.ingested == 1, second.error
    new = Package.objects.get(source_message_id=3)
    assert new.content_hash == sha256_of(sandbox, 3)
    assert (new.source_topic_id, new.creator) == (42, "Dragons"), "taken in its own topic"
    assert Package.objects.filter(source_message_id__isnull=True, source_message_ids=[3]).count() == 1
