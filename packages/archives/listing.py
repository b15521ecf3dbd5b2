"""Which reader lists a set: by format, staged on disk or read in place. Runs in the listing child.

The 7z and RAR readers are imported where a set of their format is read: the listing children's fork server
imports them once (forks.py); the web and worker processes that import this package never need them."""

import io
from pathlib import Path

from packages.archives.entries import Entry, Limits, RemoteVolume
from packages.archives.ranged import RANGE_BYTES, RangedReader
from packages.archives.streams import JoinedVolumes, split_zip_order
from packages.archives.zip_format import zip_entries, zip_list
from packages.detection import SEVEN_ZIP, ZIP


def entries_list(
    archive_type: str,
    volumes: list[Path] | list[RemoteVolume],
    limits: Limits,
    range_bytes: int = 0,
    password: str | None = None,
) -> list[Entry]:
    """The entries; `password` opens encrypted headers (7z, rar: a zip's directory is never encrypted)."""
    if isinstance(volumes[0], RemoteVolume):
        return _remote_entries_list(archive_type, volumes, limits, range_bytes or RANGE_BYTES, password)
    if archive_type == ZIP:
        return zip_list(volumes, limits)
    if archive_type == SEVEN_ZIP:
        from packages.archives.sevenzip_format import sevenzip_list

        return sevenzip_list(volumes, limits, password)
    from packages.archives.rar_format import rar_list

    return rar_list(volumes, limits, password)


def _remote_entries_list(
    archive_type: str, volumes: list[RemoteVolume], limits: Limits, range_bytes: int, password: str | None
) -> list[Entry]:
    """The same readers over ranged reads: a volume set is one joined stream (zip's split sets in their
    .z01… .zip order; .001 sets and 7z volumes are plain byte splits, in name order)."""
    if archive_type == ZIP and not volumes[0].name.lower().endswith(".001"):
        volumes = sorted(volumes, key=lambda volume: split_zip_order(Path(volume.name)))
    else:
        volumes = sorted(volumes, key=lambda volume: volume.name)
    with JoinedVolumes([RangedReader(volume) for volume in volumes]) as joined:
        stream = io.BufferedReader(joined, buffer_size=range_bytes)
        if archive_type == ZIP:
            return zip_entries(stream, limits)
        if archive_type == SEVEN_ZIP:
            from packages.archives.sevenzip_format import sevenzip_list

            return sevenzip_list(stream, limits, password)
        from packages.archives.rar_format import rar_list, rar_set_list_remote, rar_volume_named

        if len(volumes) > 1 and all(rar_volume_named(volume) for volume in volumes):
            return rar_set_list_remote(volumes, limits, range_bytes, password)
        return rar_list([stream], limits, password)
