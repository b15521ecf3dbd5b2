"""STORAGE_URL: the local disk when empty, else one S3-compatible bucket; a wrong value stops start-up with
what to write instead."""

import pytest
from django.core.exceptions import ImproperlyConfigured

from config.storage import FILESYSTEM_BACKEND, S3_BACKEND, default_storage_for, object_store_parse


def test_no_storage_url_keeps_files_on_the_local_disk():
    assert default_storage_for("") == {"BACKEND": FILESYSTEM_BACKEND}


def test_a_minio_url_names_endpoint_bucket_prefix_and_credentials():
    store = object_store_parse("s3+http://stash%40cast:p%2Fss@minio:9000/stashcast/prod/")
    assert store.endpoint_url == "http://minio:9000"
    assert (store.bucket, store.prefix) == ("stashcast", "prod")
    assert (store.access_key, store.secret_key) == ("stash@cast", "p/ss")
    assert store.addressing_style == "path"


def test_an_s3_url_speaks_https_and_may_leave_credentials_to_boto3():
    store = object_store_parse("s3://s3.eu-central-1.amazonaws.com/media?region=eu-central-1&addressing_style=virtual")
    assert store.endpoint_url == "https://s3.eu-central-1.amazonaws.com"
    assert (store.access_key, store.secret_key, store.region) == (None, None, "eu-central-1")
    assert store.addressing_style == "virtual"


def test_the_storages_entry_is_django_storages_s3_with_private_uniquely_named_objects():
    entry = default_storage_for("s3+http://key:secret@127.0.0.1:9000/stashcast")
    assert entry["BACKEND"] == S3_BACKEND
    options = entry["OPTIONS"]
    assert (options["bucket_name"], options["endpoint_url"]) == ("stashcast", "http://127.0.0.1:9000")
    assert options["file_overwrite"] is False and options["default_acl"] is None


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://minio:9000/stashcast", "must start with s3://"),
        ("minio:9000/stashcast", "must start with s3://"),
        ("s3:///stashcast", "names no server"),
        ("s3://key:secret@minio:9000/", "names no bucket"),
        ("s3://key@minio:9000/stashcast", "a key without a secret"),
        ("s3://minio:nine/stashcast", "port is not a number"),
        ("s3://minio/stashcast?regoin=eu", "unknown options regoin"),
        ("s3://minio/stashcast?addressing_style=dns", "addressing_style='dns'"),
    ],
)
def test_a_wrong_storage_url_says_what_is_wrong(url, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        object_store_parse(url)
