"""Packages, their listings and the raw files behind them."""

import hashlib
import logging
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cached_property
from pathlib import Path

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from core.errors import OperatorError
from packages.archives import Entry, ListingError, Thumbnail, read_archive
from packages.models import (
    RAW_FILE_MAX_RETENTION_DAYS,
    MetadataStatus,
    Package,
    PackageFile,
    RawFile,
    RepackDecision,
    SkippedFingerprint,
)
from packages.previews import previews_from_archive
from packages.raw_objects import (
    COPY_CHUNK,
    RawObjectUnreadable,
    disk_name,
    object_save,
    raw_files_listable,
    storage_is_local,
)
from packages.repacks import ListedFile, fingerprint_skipped_original, likely_same_find, listing_fingerprint

logger = logging.getLogger(__name__)

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


@dataclass(frozen=True)
class UploadPart:
    name: str
    volume_index: int
    offset: int
    length: int


def upload_plan(*, volumes: list[tuple[str, int]], limit: int) -> list[UploadPart]:
    """Volumes above the upload limit become `<name>.001`… parts that re-join with `cat`."""
    parts = []
    for index, (name, size) in enumerate(volumes):
        if size <= limit:
            parts.append(UploadPart(name=name, volume_index=index, offset=0, length=size))
            continue
        count = -(-size // limit)
        for number in range(count):
            offset = number * limit
            parts.append(
                UploadPart(
                    name=f"{name}.{number + 1:03d}",
                    volume_index=index,
                    offset=offset,
                    length=min(limit, size - offset),
                )
            )
    return parts


class SplitMismatch(Exception):
    """The split parts do not re-join to the original bytes."""


def part_write(*, source: Path, part: UploadPart, target: Path, digest=None) -> None:
    """Copy one byte range into its own file, feeding what was written to `digest`."""
    remaining = part.length
    with open(source, "rb") as reader, open(target, "wb") as writer:
        reader.seek(part.offset)
        while remaining:
            chunk = reader.read(min(COPY_CHUNK, remaining))
            if not chunk:
                raise SplitMismatch(f"{source.name} ended {remaining} bytes early while writing {part.name}")
            writer.write(chunk)
            if digest is not None:
                digest.update(chunk)
            remaining -= len(chunk)


def volume_split(*, source: Path, parts: list[UploadPart], folder: Path, expected_sha256: str) -> list[Path]:
    """Write a volume's parts and prove that they re-join (`cat`) to the volume's bytes."""
    digest = hashlib.sha256()
    written = []
    try:
        for part in parts:
            target = folder / disk_name(part.name)
            part_write(source=source, part=part, target=target, digest=digest)
            written.append(target)
        if digest.hexdigest() != expected_sha256:
            raise SplitMismatch(
                f"the parts of {source.name} re-join to SHA-256 {digest.hexdigest()}, not {expected_sha256}"
            )
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    return written


def package_find(*, content_hash: str = "", document_ids: list[int] | None = None, source=None) -> Package | None:
    """The dedupe ladder's lookups, cheapest first; `source` is (chat, first message id)."""
    if document_ids:
        package = Package.objects.filter(telegram_document_ids__contains=document_ids).first()
        if package is not None:
            return package
    if source is not None:
        chat, message_id = source
        package = Package.objects.filter(source_chat=chat, source_message_id=message_id).first()
        if package is not None:
            return package
    if content_hash:
        return Package.objects.filter(content_hash=content_hash).first()
    return None


def package_remember_documents(*, package: Package, document_ids: list[int]) -> None:
    """A duplicate seen elsewhere: its document ids dedupe for free next time."""
    new_ids = [doc_id for doc_id in document_ids if doc_id not in package.telegram_document_ids]
    if new_ids:
        package.telegram_document_ids = [*package.telegram_document_ids, *new_ids]
        package.save(update_fields=["telegram_document_ids"])


def package_reupload_request(*, package: Package) -> None:
    """Its destination messages are gone: keep the package (row, listing, history) for a new upload."""
    Package.objects.filter(pk=package.pk).update(reupload_needed=True)


def package_reuploaded(*, package: Package, dest_message_ids: list[int], dest_part_names: list[str], uploaded_by):
    """The new upload of a package whose destination messages were deleted."""
    package.dest_message_ids = dest_message_ids
    package.dest_part_names = dest_part_names
    package.upload_generation += 1
    package.reupload_needed = False
    package.dest_checked_at = timezone.now()
    package.uploaded_by = uploaded_by
    package.save(
        update_fields=[
            "dest_message_ids",
            "dest_part_names",
            "upload_generation",
            "reupload_needed",
            "dest_checked_at",
            "uploaded_by",
        ]
    )
    return package


def package_stub_create(**fields) -> Package:
    """Phase one, written right after the upload: enough to never upload again."""
    package = Package.objects.create(metadata_status=MetadataStatus.PENDING, **fields)
    package_search_words_update(package=package)
    return package


# A tsvector holds at most 1 MB: the words of this much of a listing are searchable.
SEARCH_TEXT_LIMIT = 200_000


def package_search_words_update(*, package: Package) -> None:
    """Index the words of the package's name and listed paths, and their three-letter pieces (substring
    search), in one row, for a fast search."""
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE packages_package SET search_words = to_tsvector('simple', regexp_replace(text, "
            "'[^[:alnum:]]+', ' ', 'g')), name_grams = text_trigrams(text), search_text = lower(text) "
            "FROM (SELECT left(file_name || ' ' || coalesce((SELECT string_agg(path, ' ') "
            "FROM packages_packagefile WHERE package_id = %s), ''), %s) AS text "
            "FROM packages_package WHERE id = %s) searched WHERE id = %s",
            [package.pk, SEARCH_TEXT_LIMIT, package.pk, package.pk],
        )


@dataclass(frozen=True)
class Listing:
    """An archive's listing as read (with thumbnails of the first images inside: preview candidates), or why it
    could not be."""

    entries: list[Entry]
    error: ListingError | None = None
    thumbnails: list[Thumbnail] = field(default_factory=list)

    @cached_property
    def fingerprint(self) -> str:
        files = (ListedFile(path=entry.path, size=entry.size, crc32=entry.crc32) for entry in self.entries)
        return listing_fingerprint(files)


def package_listing_read(*, archive_type: str, volume_paths: list, range_bytes: int = 0) -> Listing:
    """The listing, and thumbnails of up to PACKAGE_PREVIEW_ARCHIVE_IMAGES images inside (of staged volumes);
    volumes read in place go `range_bytes` at a time."""
    try:
        read = read_archive(
            archive_type, volume_paths, thumbnails=settings.PACKAGE_PREVIEW_ARCHIVE_IMAGES, range_bytes=range_bytes
        )
        return Listing(entries=read.entries, thumbnails=read.thumbnails)
    except ListingError as exc:
        return Listing(entries=[], error=exc)


def package_skipped_copy_of(*, listing: Listing) -> Package | None:
    """The package whose copies the operator skips, when this listing is one of them."""
    return fingerprint_skipped_original(fingerprint=listing.fingerprint)


def package_metadata_fill(*, package: Package, volume_paths: list, listing: Listing | None = None) -> Package:
    """Phase two: the file listing, and thumbnails of the first images inside (preview candidates), read now
    unless the caller read them already. An unreadable archive is still a package, with the reason."""
    if listing is None:
        listing = package_listing_read(archive_type=package.archive_type, volume_paths=volume_paths)
    if listing.error is not None:
        package.metadata_status = MetadataStatus.UNAVAILABLE
        package.metadata_error = str(listing.error)
        package.needs_password = listing.error.needs_password
        package.save(update_fields=["metadata_status", "metadata_error", "needs_password"])
        return package
    entries = listing.entries
    with transaction.atomic():
        PackageFile.objects.filter(package=package).delete()
        PackageFile.objects.bulk_create(
            (
                PackageFile(
                    package=package,
                    path=entry.path,
                    size=entry.size,
                    compressed_size=entry.compressed_size,
                    crc32=entry.crc32,
                    encrypted=entry.encrypted,
                )
                for entry in entries
            ),
            batch_size=5000,
        )
        package.file_count = len(entries)
        package.encrypted_files = sum(entry.encrypted for entry in entries)
        package.needs_password = bool(entries) and package.encrypted_files == len(entries)
        package.metadata_status = MetadataStatus.COMPLETE
        notes = [_unsafe_entries_note(entries), _encrypted_entries_note(entries)]
        package.metadata_error = " ".join(note for note in notes if note)
        package.listing_fingerprint = listing.fingerprint
        package.save(
            update_fields=[
                "file_count",
                "encrypted_files",
                "needs_password",
                "metadata_status",
                "metadata_error",
                "listing_fingerprint",
            ]
        )
        package_search_words_update(package=package)
        package_repack_recognise(package=package)
        package.raw_files.filter(processed_at__isnull=True).update(processed_at=timezone.now())
    previews_from_archive(package=package, thumbnails=listing.thumbnails)
    return package


def package_repack_recognise(*, package: Package) -> Package:
    """Mark the package "likely the same as" an earlier one whose listing it (nearly) repeats."""
    files = [
        ListedFile(path=path, size=size, crc32=crc)
        for path, size, crc in package.files.values_list("path", "size", "crc32")
    ]
    found = likely_same_find(package=package, files=files)
    package.likely_same_as = found.package if found else None
    package.likely_same_overlap = found.overlap if found else None
    package.save(update_fields=["likely_same_as", "likely_same_overlap"])
    return package


class RepackDecisionRefused(OperatorError):
    """The package is not marked as a likely repack, or the decision is not one we know."""


def package_repack_decide(*, package: Package, decision: str) -> Package:
    """The operator's answer to "likely the same as …": keep both (the mark is dismissed), or keep this one and
    skip future copies with this listing (and the original's) — they count as duplicates of the original."""
    if package.likely_same_as_id is None:
        raise RepackDecisionRefused(f"{package.file_name} is not marked as a likely repack of another package.")
    if decision not in RepackDecision.values:
        raise RepackDecisionRefused(f"Unknown decision {decision!r}; use one of {', '.join(RepackDecision.values)}.")
    with transaction.atomic():
        package.repack_decision = decision
        package.save(update_fields=["repack_decision"])
        fingerprints = {package.listing_fingerprint, package.likely_same_as.listing_fingerprint} - {""}
        if decision == RepackDecision.SKIP_COPIES:
            for fingerprint in fingerprints:
                SkippedFingerprint.objects.get_or_create(
                    fingerprint=fingerprint, defaults={"package_id": package.likely_same_as_id}
                )
        else:
            SkippedFingerprint.objects.filter(fingerprint__in=fingerprints).delete()
    return package


def _unsafe_entries_note(entries) -> str:
    """A complete listing can still warn: whoever extracts this archive elsewhere should know."""
    unsafe = sum(1 for entry in entries if entry.unsafe)
    if not unsafe:
        return ""
    return (
        f"{unsafe} of {len(entries)} entries point outside the archive (../, an absolute path or a link); "
        "they are listed relative to it. Extract this archive with care."
    )


def _encrypted_entries_note(entries) -> str:
    encrypted = sum(1 for entry in entries if entry.encrypted)
    if not encrypted:
        return ""
    if encrypted == len(entries):
        return "Every file is encrypted: extracting it needs the password (ask the source channel)."
    return f"{encrypted} of {len(entries)} files are encrypted: extracting them needs the password."


def package_metadata_backfill(*, package: Package) -> Package:
    """Fill a stub's listing from its retained raw files (after a crash between the phases)."""
    raws = list(package.raw_files.all())
    by_name = {raw.file_name: raw for raw in raws}
    ordered = [by_name.get(name) for name in package.volume_names]
    if not raws or any(raw is None or not raw.object for raw in ordered):
        package.metadata_status = MetadataStatus.UNAVAILABLE
        package.metadata_error = "The raw files were purged before the listing was written."
        package.save(update_fields=["metadata_status", "metadata_error"])
        return package
    with raw_files_listable(ordered, package.volume_names, archive_type=package.archive_type) as volumes:
        return package_metadata_fill(package=package, volume_paths=volumes)


# Browse and edit ---------------------------------------------------------------------------------------------

MAX_TAGS = 20
MAX_TAG_CHARS = 100
MAX_CREATOR_CHARS = 255
BULK_EDIT_LIMIT = 1000


def tags_clean(tags: list[str], *, field: str = "tags") -> list[str]:
    """Tags as typed, trimmed, without empties or repeats (the first spelling wins), in their order."""
    kept: dict[str, str] = {}
    for tag in tags:
        tag = " ".join(str(tag).split())
        if len(tag) > MAX_TAG_CHARS:
            raise ValidationError({field: f"A tag has at most {MAX_TAG_CHARS} characters; “{tag[:30]}…” is longer."})
        if tag:
            kept.setdefault(tag.lower(), tag)
    if len(kept) > MAX_TAGS:
        raise ValidationError({field: f"A package has at most {MAX_TAGS} tags; {len(kept)} were given."})
    return list(kept.values())


def creator_clean(creator: str) -> str:
    creator = " ".join(creator.split())
    if len(creator) > MAX_CREATOR_CHARS:
        raise ValidationError({"creator": f"A creator's name has at most {MAX_CREATOR_CHARS} characters."})
    return creator


def package_edit(*, package: Package, creator: str | None = None, tags: list[str] | None = None) -> Package:
    """The operator names the creator and the tags; None leaves a field as it is."""
    fields = []
    if creator is not None:
        package.creator = creator_clean(creator)
        fields.append("creator")
    if tags is not None:
        package.tags = tags_clean(tags)
        fields.append("tags")
    if fields:
        package.save(update_fields=fields)
    return package


def packages_bulk_edit(
    *, package_ids: list[int], creator: str | None = None, add_tags: list[str] = (), remove_tags: list[str] = ()
) -> int:
    """Set the creator of, and add or remove tags on, many packages at once; returns how many were changed."""
    if not package_ids:
        raise ValidationError({"packages": "Choose at least one package."})
    if len(package_ids) > BULK_EDIT_LIMIT:
        raise ValidationError({"packages": f"Edit at most {BULK_EDIT_LIMIT} packages at once."})
    if creator is None and not add_tags and not remove_tags:
        raise ValidationError({"creator": "Give a creator, or tags to add or remove."})
    creator = None if creator is None else creator_clean(creator)
    adding = tags_clean(list(add_tags), field="add_tags")
    removing = {tag.lower() for tag in tags_clean(list(remove_tags), field="remove_tags")}
    with transaction.atomic():
        packages = list(Package.objects.select_for_update().filter(pk__in=package_ids).only("pk", "creator", "tags"))
        for package in packages:
            if creator is not None:
                package.creator = creator
            kept = [tag for tag in package.tags if tag.lower() not in removing]
            package.tags = tags_clean([*kept, *adding])
        Package.objects.bulk_update(packages, ["creator", "tags"])
    return len(packages)


def packages_category_retag(*, chat_id: int, old: str, new: str) -> int:
    """A channel's category changed: its packages lose the old category's tag and get the new one."""
    if old == new:
        return 0
    with connection.cursor() as cursor:
        # Case-insensitive, like every tag comparison: "minis" and "Minis" are one tag.
        cursor.execute(
            "UPDATE packages_package SET tags = array(SELECT tag FROM unnest(tags) WITH ORDINALITY AS t(tag, n) "
            "WHERE lower(tag) NOT IN (lower(%s), lower(%s)) ORDER BY n) || "
            "CASE WHEN %s = '' THEN '{}'::varchar[] ELSE ARRAY[%s]::varchar[] END WHERE source_chat_id = %s",
            [old, new, new, new, chat_id],
        )
        return cursor.rowcount
