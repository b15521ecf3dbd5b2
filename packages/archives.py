"""Archive listings: read the directory of a zip, rar or 7z, never extract.

Hostile input (not an archive, encrypted headers, absurd entry counts, odd
names) ends as a ListingError with a reason, never a crash.
"""

import zipfile
from dataclasses import dataclass
from pathlib import Path

import multivolumefile
import py7zr
import rarfile

from packages.detection import MODEL, RAR, SEVEN_ZIP, ZIP

MAX_ENTRIES = 200_000


@dataclass(frozen=True)
class Entry:
    path: str
    size: int
    compressed_size: int | None = None
    crc32: int | None = None


class ListingError(Exception):
    """The listing is unavailable; the message says why."""

    needs_password = False


class PasswordProtected(ListingError):
    needs_password = True


def list_archive(archive_type: str, volumes: list[Path]) -> list[Entry]:
    """Entries of an archive set whose volumes are staged, in order, in one folder."""
    if archive_type == MODEL:
        return [Entry(path=volumes[0].name, size=volumes[0].stat().st_size)]
    try:
        if archive_type == ZIP:
            return _list_zip(volumes)
        if archive_type == SEVEN_ZIP:
            return _list_7z(volumes)
        if archive_type == RAR:
            return _list_rar(volumes)
    except ListingError:
        raise
    except (
        zipfile.BadZipFile,
        zipfile.LargeZipFile,
        py7zr.exceptions.ArchiveError,
        rarfile.Error,
        EOFError,
        OSError,
        ValueError,
        KeyError,
        IndexError,
        NotImplementedError,
        MemoryError,
    ) as exc:
        raise ListingError(f"Cannot read the archive listing: {exc.__class__.__name__}: {exc}") from None
    raise ListingError(f"Unknown archive type {archive_type!r}")


def _checked(entries: list[Entry]) -> list[Entry]:
    if len(entries) > MAX_ENTRIES:
        raise ListingError(f"The archive lists {len(entries)} entries, above the limit of {MAX_ENTRIES}.")
    return entries


def _list_zip(volumes: list[Path]) -> list[Entry]:
    if len(volumes) > 1 and volumes[0].name.lower().endswith(".001"):
        with multivolumefile.open(_volume_base(volumes[0]), mode="rb") as stream:
            return _zip_entries(zipfile.ZipFile(stream))
    # A spanned set (.z01…+.zip) keeps its central directory in the last volume.
    with zipfile.ZipFile(volumes[-1]) as archive:
        return _zip_entries(archive)


def _zip_entries(archive: zipfile.ZipFile) -> list[Entry]:
    infos = archive.infolist()
    if len(infos) > MAX_ENTRIES:
        raise ListingError(f"The archive lists {len(infos)} entries, above the limit of {MAX_ENTRIES}.")
    return [
        Entry(path=info.filename, size=info.file_size, compressed_size=info.compress_size, crc32=info.CRC)
        for info in infos
        if not info.is_dir()
    ]


def _list_7z(volumes: list[Path]) -> list[Entry]:
    try:
        if len(volumes) > 1:
            with multivolumefile.open(_volume_base(volumes[0]), mode="rb") as stream:
                return _7z_entries(py7zr.SevenZipFile(stream, mode="r"))
        with py7zr.SevenZipFile(volumes[0], mode="r") as archive:
            return _7z_entries(archive)
    except py7zr.exceptions.PasswordRequired:
        raise PasswordProtected("The 7z archive has encrypted headers; it needs a password.") from None


def _7z_entries(archive: py7zr.SevenZipFile) -> list[Entry]:
    infos = archive.list()
    return _checked(
        [
            Entry(path=info.filename, size=info.uncompressed or 0, compressed_size=info.compressed, crc32=info.crc32)
            for info in infos
            if not info.is_directory
        ]
    )


def _list_rar(volumes: list[Path]) -> list[Entry]:
    # rarfile finds the next volumes by name in the same folder; listing needs no binary.
    try:
        with rarfile.RarFile(volumes[0]) as archive:
            if archive.needs_password() and not archive.infolist():
                raise PasswordProtected("The rar archive has encrypted headers; it needs a password.")
            infos = archive.infolist()
            return _checked(
                [
                    Entry(path=info.filename, size=info.file_size, compressed_size=info.compress_size, crc32=info.CRC)
                    for info in infos
                    if not info.is_dir()
                ]
            )
    except rarfile.PasswordRequired:
        raise PasswordProtected("The rar archive has encrypted headers; it needs a password.") from None
    except rarfile.NeedFirstVolume:
        raise ListingError("The first volume of the rar set is missing.") from None


def _volume_base(first_volume: Path) -> Path:
    """multivolumefile opens `name.7z` from `name.7z.001`, `name.7z.002`…"""
    return first_volume.with_name(first_volume.name[: -len(".001")])
