"""The packages API: search by name or by a path inside the archive, and one package with its listing."""

import pytest
from rest_framework.test import APIClient

from accounts.models import Chat
from ingestion.models import Channel
from packages.models import MetadataStatus, Package
from tests.support.ingestion import DESTINATION, DRAGON_AND_CASTLE, SOURCE, run_cycle, world, world_authorize_load

pytestmark = pytest.mark.django_db

LIST_FIELDS = {
    "id",
    "file_name",
    "caption",
    "password_source",
    "file_size",
    "file_size_text",
    "archive_type",
    "content_hash",
    "is_multipart",
    "part_count",
    "volume_names",
    "whole_by",
    "encrypted_files",
    "needs_password",
    "file_count",
    "metadata_status",
    "source_channel",
    "source_message_id",
    "source_topic_id",
    "destination_channel",
    "dest_message_ids",
    "creator",
    "tags",
    "listing_fingerprint",
    "likely_same_as",
    "likely_same_overlap",
    "repack_decision",
    "created_at",
    "preview",
    "preview_url",
    "collection",
    "collection_rule",
    "matched_paths",
    "matched_count",
}


def build_once() -> None:
    # A chat that is no channel first, so that chat ids and channel ids differ.
    Chat.objects.create(telegram_id=1, title="Friends", type="group")
    world_authorize_load(world(messages=DRAGON_AND_CASTLE))
    assert run_cycle().ingested == 2


@pytest.fixture
def ingested(built_copy, storage) -> dict[str, Package]:
    """The two packages by file name (ingested once for the module)."""
    return {package.file_name: package for package in Package.objects.all()}


def test_anonymous_clients_are_refused():
    assert APIClient().get("/api/packages/").status_code in (401, 403)


def test_list_every_package_newest_first(api, ingested):
    body = api.get("/api/packages/").json()

    assert body["count"] == 2
    assert [item["file_name"] for item in body["results"]] == ["castle.7z.001", "dragon.zip"]
    castle = body["results"][0]
    assert set(castle) == LIST_FIELDS
    assert castle["is_multipart"] and castle["part_count"] == len(castle["volume_names"]) >= 3
    assert castle["whole_by"].startswith("7z start header: the archive is ")
    assert castle["metadata_status"] == MetadataStatus.COMPLETE and castle["file_count"] == 2
    assert len(castle["dest_message_ids"]) == castle["part_count"]
    assert castle["content_hash"] == ingested["castle.7z.001"].content_hash
    assert castle["creator"] == "Models A" and castle["tags"] == [] and castle["matched_paths"] == []


def test_search_by_a_path_inside_the_archive(api, ingested):
    body = api.get("/api/packages/", {"search": "WINGS/"}).json()

    assert [item["file_name"] for item in body["results"]] == ["dragon.zip"]
    assert body["results"][0]["matched_paths"] == ["dragon/wings/left.stl", "dragon/wings/right.stl"]


def test_search_by_file_name(api, ingested):
    body = api.get("/api/packages/", {"search": "castle"}).json()

    assert [item["file_name"] for item in body["results"]] == ["castle.7z.001"]
    assert api.get("/api/packages/", {"search": "griffin"}).json()["count"] == 0


def test_one_package_with_its_files(api, ingested):
    dragon = ingested["dragon.zip"]

    body = api.get(f"/api/packages/{dragon.pk}/").json()

    assert body["file_name"] == "dragon.zip" and "matched_paths" not in body
    assert body["metadata_error"] == "" and body["source_message_ids"] == [11]
    source, destination = (Channel.objects.get(chat__telegram_id=chat) for chat in (SOURCE, DESTINATION))
    assert source.pk != source.chat_id, "the test tells a channel's id from its chat's"
    assert (body["source_channel"], body["destination_channel"]) == (source.pk, destination.pk), "as /api/channels/"
    assert [file["path"] for file in body["files"]] == [
        "README.txt",
        "dragon/body.stl",
        "dragon/wings/left.stl",
        "dragon/wings/right.stl",
    ]
    body_stl = body["files"][1]
    assert body_stl["size"] == 2000 and body_stl["crc32"] is not None and body_stl["compressed_size"] is not None


def test_an_unknown_package_is_a_404_with_a_message(api):
    response = api.get("/api/packages/999999/")

    assert response.status_code == 404 and response.json()["message"]
