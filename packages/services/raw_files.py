"""Raw files: the downloaded volumes kept for a while (retention), one object per content and document."""

from datetime import timedelta
from pathlib import Path

from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.utils import timezone

from packages.models import RAW_FILE_MAX_RETENTION_DAYS, RawFile
from packages.raw_objects import RawObjectUnreadable, disk_name, object_save, storage_is_local

SHORT_RETENTION = timedelta(hours=3)


class RetentionMisconfigured(Exception):
    """A channel's expiration_days is negative: the operator must fix it."""


def raw_file_expiry(*, expiration_days: int | None):
    if expiration_days is None:
        return None
    if expiration_days < 0:
        raise RetentionMisconfigured(
            f"expiration_days is {expiration_days}; use empty (keep), 0 (3 hours) or a positive number of days."
        )
    if expiration_days == 0:
        return timezone.now() + SHORT_RETENTION
    # A value stored before the bound existed must not fail every cycle: a century is as good as its wish.
    return timezone.now() + timedelta(days=min(expiration_days, RAW_FILE_MAX_RETENTION_DAYS))


def raw_file_record(
    *,
    file_uid: str,
    file_name: str,
    size: int,
    sha256: str,
    staged_path: Path | None,
    chat,
    expiration_days: int | None,
) -> RawFile:
    """Keep a downloaded file: idempotent by file_uid, one unprocessed object per content. No staged_path: the
    volume was not downloaded again because its raw file is kept (`packages.selectors.raw_file_kept`)."""
    expires_at = raw_file_expiry(expiration_days=expiration_days)
    existing = RawFile.objects.filter(file_uid=file_uid).first()
    if existing is not None:
        return _raw_file_reuse(existing, staged_path, sha256=sha256, expires_at=expires_at)
    if staged_path is None:
        raise RawObjectUnreadable(f"the kept copy of {file_name} is no longer recorded; it is downloaded again")
    duplicate = RawFile.objects.filter(hash_algorithm="sha256", hash=sha256, processed_at__isnull=True).first()
    if duplicate is not None:
        return _raw_file_reuse(duplicate, staged_path, sha256=sha256, expires_at=expires_at)
    raw = RawFile(
        file_uid=file_uid,
        file_name=file_name,
        size=size,
        hash=sha256,
        source_chat=chat,
        expires_at=expires_at,
    )
    object_save(raw, staged_path, name=_object_name(sha256, file_uid, file_name))
    try:
        with transaction.atomic():
            raw.save()
    except IntegrityError:
        # Another worker recorded the same file or content first: use the winner. In an object store both may
        # have written the same key (same document, same bytes): then it is the winner's object, and stays.
        winner = (
            RawFile.objects.filter(file_uid=file_uid).first()
            or RawFile.objects.filter(hash_algorithm="sha256", hash=sha256, processed_at__isnull=True).first()
        )
        if winner is None or winner.object.name != raw.object.name:
            default_storage.delete(raw.object.name)
        if winner is None:
            raise
        return _raw_file_reuse(winner, staged_path, sha256=sha256, expires_at=expires_at)
    return raw


def _object_name(sha256: str, file_uid: str, file_name: str) -> str:
    """Content-addressed, and one key per Telegram document: two rows never share an object, so deleting one
    row's object never takes another's."""
    return f"{sha256[:2]}/{sha256}/{file_uid}/{disk_name(file_name)}"


def _raw_file_reuse(raw: RawFile, staged_path: Path | None, *, sha256: str, expires_at) -> RawFile:
    """The object already kept wins and the new download is dropped, unless the kept one was purged (or is
    not the same bytes): then the new download becomes its object again."""
    if raw.purged_at is not None or not raw.object or raw.hash != sha256:
        if staged_path is None:
            raise RawObjectUnreadable(f"the kept copy of {raw.file_name} was purged; it is downloaded again")
        if raw.object:
            default_storage.delete(raw.object.name)
        object_save(raw, staged_path, name=_object_name(sha256, raw.file_uid, raw.file_name))
        raw.hash, raw.purged_at, raw.expires_at = sha256, None, expires_at
        raw.save(update_fields=["object", "hash", "purged_at", "expires_at"])
        return raw
    if staged_path is not None and storage_is_local():
        # The kept file serves this set's upload as it is; in an object store the staged copy does (removed
        # with the set's staging folder), so it is not fetched back.
        staged_path.unlink(missing_ok=True)
    fields = []
    if raw.expires_at is not None and raw.expires_at < timezone.now() + SHORT_RETENTION:
        raw.expires_at = timezone.now() + SHORT_RETENTION
        fields.append("expires_at")
    if fields:
        raw.save(update_fields=fields)
    return raw


def raw_file_lost(*, raw: RawFile) -> None:
    """Its kept copy is gone or damaged: forget it, so the next try downloads the file from Telegram."""
    if raw.object:
        default_storage.delete(raw.object.name)
    RawFile.objects.filter(pk=raw.pk).update(object="", purged_at=timezone.now())


def raw_files_purge(*, now=None) -> int:
    """Delete the stored objects of expired raw files; the rows stay as a record."""
    now = now or timezone.now()
    count = 0
    for raw in RawFile.objects.filter(expires_at__lt=now, purged_at__isnull=True).exclude(object=""):
        default_storage.delete(raw.object.name)
        raw.object = ""
        raw.purged_at = now
        raw.save(update_fields=["object", "purged_at"])
        count += 1
    return count
