"""A package's file listing (phase two): read from its volumes, stored, and why it could not be."""

from dataclasses import dataclass, field
from functools import cached_property

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from core.crypto import seal
from packages.archives import Entry, ListingError, Thumbnail, children_in_background, read_archive
from packages.models import MetadataStatus, Package, PackageFile
from packages.previews import previews_from_archive
from packages.raw_objects import raw_files_listable
from packages.repacks import ListedFile, fingerprint_skipped_original, listing_fingerprint
from packages.services.passwords import archive_password_candidates
from packages.services.repack_decisions import package_repack_recognise
from packages.services.search import package_search_words_update


@dataclass(frozen=True)
class PackageListing:
    """An archive's listing as read (with thumbnails of the first images inside: preview candidates), or why it
    could not be."""

    entries: list[Entry]
    error: ListingError | None = None
    thumbnails: list[Thumbnail] = field(default_factory=list)
    opened_with: tuple[str, str] | None = None  # (password, PasswordSource) that opened it
    model_preview_refused: str = ""  # why its main model got no preview

    @cached_property
    def fingerprint(self) -> str:
        files = (ListedFile(path=entry.path, size=entry.size, crc32=entry.crc32) for entry in self.entries)
        return listing_fingerprint(files)


def package_listing_read(
    *, archive_type: str, volume_paths: list, range_bytes: int = 0, passwords: list[tuple[str, str]] = ()
) -> PackageListing:
    """The listing, thumbnails of up to PACKAGE_PREVIEW_ARCHIVE_IMAGES images inside and a preview of its main
    model (of staged volumes);
    volumes read in place go `range_bytes` at a time. `passwords` ((password, source), archive_password_candidates)
    are tried on an archive that needs one."""
    try:
        read = read_archive(
            archive_type,
            volume_paths,
            thumbnails=settings.PACKAGE_PREVIEW_ARCHIVE_IMAGES,
            range_bytes=range_bytes,
            passwords=[password for password, _ in passwords],
            model_preview=True,
        )
        opened_with = None if read.password_index is None else tuple(passwords[read.password_index])
        return PackageListing(
            entries=read.entries,
            thumbnails=read.thumbnails,
            opened_with=opened_with,
            model_preview_refused=read.model_preview_refused,
        )
    except ListingError as exc:
        return PackageListing(entries=[], error=exc)


def package_skipped_copy_of(*, listing: PackageListing) -> Package | None:
    """The package whose copies the operator skips, when this listing is one of them."""
    return fingerprint_skipped_original(fingerprint=listing.fingerprint)


def package_metadata_fill(*, package: Package, volume_paths: list, listing: PackageListing | None = None) -> Package:
    """Phase two: the file listing, and thumbnails of the first images inside (preview candidates), read now
    unless the caller read them already. An unreadable archive is still a package, with the reason."""
    if listing is None:
        passwords = archive_password_candidates(
            captions=package.volume_captions or [package.caption], chat_id=package.source_chat_id
        )
        listing = package_listing_read(
            archive_type=package.archive_type, volume_paths=volume_paths, passwords=passwords
        )
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
                    header_offset=entry.header_offset,
                )
                for entry in entries
            ),
            batch_size=5000,
        )
        package.file_count = len(entries)
        package.encrypted_files = sum(entry.encrypted for entry in entries)
        package.needs_password = bool(entries) and package.encrypted_files == len(entries)
        package.metadata_status = MetadataStatus.COMPLETE
        notes = [
            _unsafe_entries_note(entries),
            _encrypted_entries_note(entries, password_known=listing.opened_with is not None),
        ]
        package.metadata_error = " ".join(note for note in notes if note)
        package.listing_fingerprint = listing.fingerprint
        if listing.opened_with is not None:
            package.password_sealed, package.password_source = seal(listing.opened_with[0]), listing.opened_with[1]
        package.save(
            update_fields=[
                "password_sealed",
                "password_source",
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
    previews_from_archive(
        package=package, thumbnails=listing.thumbnails, model_preview_refused=listing.model_preview_refused
    )
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


def _encrypted_entries_note(entries, *, password_known: bool) -> str:
    encrypted = sum(1 for entry in entries if entry.encrypted)
    if not encrypted:
        return ""
    if encrypted == len(entries) and password_known:
        return "Every file is encrypted: extracting it needs the password that opened it (see its caption)."
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


def package_previews_remake(*, package: Package) -> str:
    """The previews made again from the kept raw files (after a catalog rebuild read listings in place, or when
    drawing changed): images inside and the main model's preview. Says what came of it. A backfill nobody waits
    on: its listing child runs at a lower CPU priority than the console's pages."""
    raws = list(package.raw_files.filter(purged_at__isnull=True))
    by_name = {raw.file_name: raw for raw in raws}
    names = package.volume_names or [package.file_name]  # a single file's set names no volumes
    ordered = [by_name.get(name) for name in names]
    if any(raw is None or not raw.object for raw in ordered):
        return "its raw files are no longer kept"
    with raw_files_listable(ordered, names, archive_type=package.archive_type) as volumes, children_in_background():
        listing = package_listing_read(archive_type=package.archive_type, volume_paths=volumes)
    if listing.error is not None:
        return str(listing.error)
    made = previews_from_archive(
        package=package, thumbnails=listing.thumbnails, model_preview_refused=listing.model_preview_refused
    )
    return listing.model_preview_refused or f"{len(made)} preview(s)"
