"""Archive listings: read the directory of a zip, rar or 7z, never extract.

Archives come from strangers. A listing runs in a child process with a memory ceiling and a time limit
(`child.py`), so a header that declares millions of entries or an endless parse ends as a ListingError with a
reason, never as a dead worker. Hostile input (not an archive, encrypted headers, absurd entry counts or sizes,
odd names) ends the same way. One reader per format (`zip_format.py`, `sevenzip_format.py`, `rar_format.py`)
shares the checks of `entries.py`. A volume in an object store is read in place by ranged requests to a signed
link (`ranged.py`): listing needs the central directory or the headers, not the whole file (a RAR set too:
rarfile's volumes are opened as ranged readers). Entry paths are made safe to store and show; an entry that
points outside the archive (`../`, an absolute path, a link) is listed relative to it and flagged `unsafe`.
Thumbnails of the first images inside are made in the same child, after the listing, in the time left
(`thumbnails.py`), then a preview of the main model: a 3MF's own picture, else its mesh drawn on the CPU
(`model_previews.py`, `meshes.py`, `render.py`).

This module is the public face: callers import from `packages.archives`.
"""

from pathlib import Path

from packages.archives.child import LISTING_MEMORY_BYTES, children_in_background, list_in_child
from packages.archives.entries import (
    MAX_DECLARED_BYTES,
    MAX_ENTRIES,
    ArchiveListing,
    Entry,
    ListingError,
    PasswordProtected,
    RemoteVolume,
    Thumbnail,
    safe_path,
)
from packages.archives.meshes import MESH_SUFFIXES
from packages.archives.ranged import RANGE_BYTES
from packages.archives.thumbnails import image_entries, thumbnail_make
from packages.detection import MODEL, RAR, SEVEN_ZIP, ZIP

__all__ = [
    "LISTING_MEMORY_BYTES",
    "MAX_DECLARED_BYTES",
    "MAX_ENTRIES",
    "ArchiveListing",
    "Entry",
    "ListingError",
    "PasswordProtected",
    "RemoteVolume",
    "Thumbnail",
    "children_in_background",
    "image_entries",
    "read_archive",
    "safe_path",
    "thumbnail_make",
]


def read_archive(
    archive_type: str,
    volumes: list[Path] | list[RemoteVolume],
    *,
    thumbnails: int = 0,
    range_bytes: int = 0,
    passwords: list[str] = (),
    model_preview: bool = False,
) -> ArchiveListing:
    """The entries of an archive set whose volumes are staged, in order, in one folder (or read in place by
    ranged requests: a RAR set there only under its volumes' own names, which rarfile derives one from the
    other), and thumbnails of up to `thumbnails` images inside (the first by path), each read bounded in the
    same child; an image that cannot be read is left out, never the listing. Thumbnails are made of staged
    volumes only. Remote volumes are read `range_bytes` at a time (default RANGE_BYTES). `passwords` are tried,
    in order, on encrypted headers, and (staged volumes) on the smallest encrypted file of a listed archive: the
    listing says which one opened it. `model_preview`: a preview of the main model (a 3MF's own picture, else a
    drawing of its mesh), of staged volumes, in the same child (or why there is none)."""
    if (
        archive_type == MODEL
        and model_preview
        and isinstance(volumes[0], Path)
        and volumes[0].suffix.lower() in (MESH_SUFFIXES)
    ):
        return list_in_child(archive_type, volumes, 0, RANGE_BYTES, [], model_preview=True)
    if archive_type == MODEL:
        first = volumes[0]
        size = first.size if isinstance(first, RemoteVolume) else first.stat().st_size
        return ArchiveListing([Entry(path=safe_path(first.name)[0], size=size)], [])
    if archive_type not in (ZIP, SEVEN_ZIP, RAR):
        raise ListingError(f"Unknown archive type {archive_type!r}")
    return list_in_child(
        archive_type, volumes, thumbnails, range_bytes or RANGE_BYTES, list(passwords), model_preview=model_preview
    )
