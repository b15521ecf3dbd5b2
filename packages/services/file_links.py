"""One file out of a package's kept archive, by a signed, expiring link, like the raw-file links (downloads.py):
who may make one, the link's claims, its audit entries, and the file's bytes.

A zip member is read in place (packages.archives.members: its local header and data by ranged reads, inflated
as it streams); any other member is written out by the listing child, with its limits, then served and removed.
"""

import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from django.conf import settings
from django.core import signing
from django.core.files.storage import default_storage
from django.urls import reverse

from core import clock
from core.audit import AuditScope, audit_entry_write, audit_scope_current
from core.models import AuditEntry
from packages.archives import RemoteVolume
from packages.archives.child import member_extract_in_child
from packages.archives.entries import ListingError
from packages.archives.members import MEMBER_CHUNK_BYTES, NotDirect, zip_member_chunks
from packages.archives.ranged import RangedReader
from packages.detection import MODEL, ZIP
from packages.models import Package, PackageFile
from packages.raw_objects import disk_name, raw_files_local, storage_is_local
from packages.services.downloads import (
    VIEWERS_REFUSED,
    DownloadLinkRefused,
    download_links_allowed,
    package_raw_files,
    raw_file_gone,
    signed_link_open,
)

SALT = "stashcast.packages.file-link"


@dataclass(frozen=True)
class FileLink:
    url: str  # a path: the caller makes it absolute where it answers with one
    expires_at: datetime


def file_link_make(*, file: PackageFile, user, path: str = "", address: str | None = None) -> FileLink:
    """A link to one file of the package, good for DOWNLOAD_LINK_SECONDS; DownloadLinkRefused (403) for someone
    not allowed, (410) when the archive is no longer kept. Audited like the raw-file links, from a page or the
    API."""
    if not download_links_allowed(user=user):
        raise DownloadLinkRefused(VIEWERS_REFUSED, status=403)
    package = file.package
    _kept_raws(package)
    if file.encrypted:
        raise DownloadLinkRefused("This file is encrypted: reading it out needs the password.", status=403)
    expires_at = (clock.now() + timedelta(seconds=settings.DOWNLOAD_LINK_SECONDS)).replace(microsecond=0)
    token = signing.dumps({"f": file.pk, "p": package.pk, "u": user.pk, "e": int(expires_at.timestamp())}, salt=SALT)
    action = (
        f"file link made for {file.path[-150:]} of package {package.pk} ({package.file_name[:100]}), "
        f"until {expires_at:%Y-%m-%d %H:%M} UTC"
    )
    scope = audit_scope_current()
    if scope is None:  # the page's Get (a GET: no request scope)
        _audit(user=user, action=action, path=path, address=address)
    else:  # the API's POST: its request's entry says it in these words (told though it changes no row)
        scope.summary = f"{user.get_username()} made a {action}"
    url = reverse("packages:file", args=[token, disk_name(file.path.rsplit("/", 1)[-1])])
    return FileLink(url=url, expires_at=expires_at)


def file_link_open(*, token: str) -> tuple[PackageFile, object]:
    """The file a link names and who made it; DownloadLinkRefused when it does not open (in words)."""
    (file_id, package_id), _, user = signed_link_open(
        token=token, salt=SALT, kind="file link", ids=("f", "p"), again="open the file again from the package's page"
    )
    file = PackageFile.objects.select_related("package").filter(pk=file_id, package_id=package_id).first()
    if file is None:
        raise DownloadLinkRefused("The package or its file was deleted.", status=410)
    _kept_raws(file.package)
    return file, user


def file_link_used(*, file: PackageFile, maker, path: str, address: str | None) -> None:
    action = f"file {file.path[-200:]} read out of package {file.package_id} by a link of {maker.get_username()}"
    _audit(user=maker, action=action, path=path, address=address)


def file_bytes(*, file: PackageFile) -> Iterator[bytes]:
    """The file's bytes, as they stream: a zip member in place, anything else through the child. Raises
    ListingError before the first byte when it cannot be read out (why, in words)."""
    package = file.package
    raws = _kept_raws(package)
    if package.archive_type == MODEL:
        return _local_chunks(default_storage.open(raws[0].object.name, "rb"))
    if package.archive_type == ZIP and len(raws) == 1 and file.header_offset is not None:
        reader = _raw_reader(raws[0])
        try:
            chunks = zip_member_chunks(
                reader,
                header_offset=file.header_offset,
                compressed_size=file.compressed_size or 0,
                size=file.size,
                crc32=file.crc32,
            )
        except NotDirect:
            reader.close()
        except ListingError:
            reader.close()
            raise
        else:
            return _closing(chunks, reader)
    return _extracted(package, raws, file.path)


def _kept_raws(package: Package) -> list:
    raws = package_raw_files(package=package)
    if not raws:
        raise DownloadLinkRefused("This package's archive was never kept here; it is in its destination channel.", 410)
    for raw in raws:
        if raw.purged_at is not None or not raw.object.name:
            raise DownloadLinkRefused(raw_file_gone(raw=raw), status=410)
    return raws


def _raw_reader(raw):
    """A seekable reader of the kept archive: the file itself, or ranged reads of the object, unbuffered so each
    read asks for exactly its bytes (the header, then the member's data a chunk at a time; nothing past it)."""
    if storage_is_local():
        return default_storage.open(raw.object.name, "rb")
    volume = RemoteVolume(name=disk_name(raw.file_name), url=default_storage.url(raw.object.name), size=raw.size)
    return RangedReader(volume)


def _closing(chunks: Iterator[bytes], reader) -> Iterator[bytes]:
    try:
        yield from chunks
    finally:
        reader.close()


def _local_chunks(opened) -> Iterator[bytes]:
    with opened:
        while chunk := opened.read(MEMBER_CHUNK_BYTES):
            yield chunk


def _extracted(package: Package, raws: list, path: str) -> Iterator[bytes]:
    """Written out by the child into a staging folder, streamed, then removed."""
    root = Path(settings.INGEST_STAGING_DIR)
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="file-", dir=root) as folder:
        out = Path(folder) / "file"
        with raw_files_local(raws, [raw.file_name for raw in raws], under=root) as volumes:
            member_extract_in_child(package.archive_type, volumes, path, out)
        # Opened before its folder goes: on POSIX the open file stays readable, and nothing is left behind.
        opened = open(out, "rb")  # noqa: SIM115 (closed by the generator)
    return _local_chunks(opened)


def _audit(*, user, action: str, path: str, address: str | None) -> None:
    audit_entry_write(
        scope=AuditScope(
            via=AuditEntry.Via.PAGE, action=action, actor=user.get_username(), user=user, path=path, address=address
        )
    )
