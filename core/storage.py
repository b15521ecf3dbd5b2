"""The storage of media and raw files is usable before anything is kept in it (`manage.py storage_ensure`)."""

import uuid
from dataclasses import replace

from botocore.exceptions import BotoCoreError, ClientError
from django.conf import settings
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage

from config.storage import object_store_parse
from core.ranges import attachment_header


class StorageUnusable(Exception):
    """The storage cannot be written or read back; the message says where and why."""


def storage_outage(exc: BaseException) -> bool:
    """Whether an error is the object store being away (down, unreachable, overloaded), not a fault of what was
    being stored: a connection or timeout error, or a 5xx answer."""
    if isinstance(exc, ClientError):
        return exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0) >= 500
    return isinstance(exc, BotoCoreError)


def storage_describe() -> str:
    bucket = getattr(default_storage, "bucket_name", None)
    if bucket is None:
        return f"the local disk at {default_storage.location}"
    return f"bucket {bucket} at {default_storage.endpoint_url}"


def storage_ensure() -> str:
    """Make the bucket when it is missing, then write, read back and delete a probe; returns what was checked."""
    where = storage_describe()
    try:
        if getattr(default_storage, "bucket_name", None) is not None:
            _bucket_ensure()
        probe = default_storage.save(f"probes/{uuid.uuid4().hex}", ContentFile(b"stashcast"))
        try:
            with default_storage.open(probe, "rb") as stored:
                if stored.read() != b"stashcast":
                    raise StorageUnusable(f"{where} gave back other bytes than were written.")
        finally:
            default_storage.delete(probe)
    except (OSError, BotoCoreError, ClientError) as exc:
        raise StorageUnusable(f"Cannot use {where}: {exc}. Check STORAGE_URL (docs/operations.md).") from exc
    return where


def _bucket_ensure() -> None:
    client = default_storage.connection.meta.client
    try:
        client.head_bucket(Bucket=default_storage.bucket_name)
        return
    except ClientError as exc:
        if exc.response.get("Error", {}).get("Code") not in ("404", "NoSuchBucket"):
            raise
    region = client.meta.region_name
    options = {} if region in (None, "us-east-1") else {"CreateBucketConfiguration": {"LocationConstraint": region}}
    client.create_bucket(Bucket=default_storage.bucket_name, **options)


def storage_download_url(*, name: str, seconds: int, download_name: str) -> str | None:
    """A presigned link to an object in the object store, good for `seconds`, that the store answers itself
    (Range included) and saves as `download_name`; None when the storage is the local disk. Signed for
    STORAGE_DOWNLOAD_ENDPOINT when set: the store's address as the people downloading reach it (the signature
    covers the host, so the link cannot be rewritten afterwards)."""
    bucket = getattr(default_storage, "bucket_name", None)
    if bucket is None:
        return None
    parameters = {"ResponseContentDisposition": attachment_header(download_name)}
    seconds = max(seconds, 1)
    if not settings.STORAGE_DOWNLOAD_ENDPOINT:
        return default_storage.url(name, parameters=parameters, expire=seconds)
    store = replace(object_store_parse(settings.STORAGE_URL), endpoint_url=settings.STORAGE_DOWNLOAD_ENDPOINT)
    key = f"{store.prefix}/{name}" if store.prefix else name
    return store.client().generate_presigned_url(
        "get_object", Params={"Bucket": bucket, "Key": key, **parameters}, ExpiresIn=seconds
    )
