"""`manage.py storage_ensure`: the bucket is made when missing, checked by a write and a read, and an
unreachable store stops start-up with where and why."""

import io

import pytest
from django.core.management import CommandError, call_command

from config.storage import default_storage_for, object_store_parse


def ensure() -> str:
    out = io.StringIO()
    call_command("storage_ensure", stdout=out)
    return out.getvalue()


def test_a_missing_bucket_is_made_and_the_probe_leaves_nothing_behind(object_store, settings):
    fresh = object_store.replace("/test-", "/made-")
    settings.STORAGES = {**settings.STORAGES, "default": default_storage_for(fresh)}

    assert "Media and raw files are kept in bucket made-" in ensure()
    ensure()  # found there the second time

    store = object_store_parse(fresh)
    assert store.client().list_objects_v2(Bucket=store.bucket).get("KeyCount") == 0


def test_the_local_disk_is_checked_too(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    assert f"the local disk at {tmp_path / 'media'}" in ensure()


def test_an_unreachable_store_says_where_and_what_to_check(settings):
    settings.STORAGES = {**settings.STORAGES, "default": default_storage_for("s3+http://k:s@127.0.0.1:9/stashcast")}
    with pytest.raises(CommandError, match=r"Cannot use bucket stashcast at http://127.0.0.1:9: .* Check STORAGE_URL"):
        ensure()
