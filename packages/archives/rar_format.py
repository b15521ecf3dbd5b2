"""Rar: rarfile walks each volume's headers and finds the next volume by name; listing needs no binary."""

import io
import os
from pathlib import Path

import rarfile

from packages.archives.entries import (
    Entry,
    Limits,
    ListingError,
    PasswordProtected,
    RemoteVolume,
    entries_check,
    entry_count_check,
    entry_make,
)
from packages.archives.ranged import RangedReader
from packages.detection import RAR, classify


def rar_list(volumes: list, limits: Limits, password: str | None = None) -> list[Entry]:
    """Entries of the set whose first volume (a path or a stream) is `volumes[0]`; rarfile opens the rest (and
    decrypts encrypted headers with `password`: RarWrongPassword when it is not theirs)."""
    try:
        with rarfile.RarFile(volumes[0]) as archive:
            if password is not None:
                archive.setpassword(password)
            if archive.needs_password() and not archive.infolist():
                raise PasswordProtected("The rar archive has encrypted headers; it needs a password.")
            infos = archive.infolist()
            entry_count_check(len(infos), limits)
            return entries_check(
                [
                    entry_make(
                        info.filename,
                        info.file_size,
                        info.compress_size,
                        info.CRC,
                        link=info.is_symlink() or getattr(info, "file_redir", None) is not None,
                        limits=limits,
                        encrypted=info.needs_password(),
                    )
                    for info in infos
                    if not info.is_dir()
                ],
                limits,
            )
    except rarfile.PasswordRequired:
        raise PasswordProtected("The rar archive has encrypted headers; it needs a password.") from None
    except rarfile.NeedFirstVolume:
        raise ListingError("The first volume of the rar set is missing.") from None


def rar_volume_named(volume: RemoteVolume) -> bool:
    """Its name is a RAR volume's, from which rarfile can derive the next one."""
    kind = classify(Path(volume.name).name)
    return kind is not None and kind.archive_type == RAR and kind.scheme in ("part", "old-rar", "single")


def rar_set_list_remote(
    volumes: list[RemoteVolume], limits: Limits, range_bytes: int, password: str | None = None
) -> list[Entry]:
    """A RAR set read in place. rarfile walks each volume's headers block to block, seeks past the data, and
    opens the next volume by the name it derives: in this child its `open` answers those names with ranged
    readers. A volume it asks for that is not in the set fails the listing (rarfile would stop quietly)."""
    by_name = {Path(volume.name).name: volume for volume in volumes}
    asked_for_missing = []

    def open_volume(name, mode="rb", buffering=-1):
        volume = by_name.get(os.path.basename(str(name)))
        if volume is None:
            asked_for_missing.append(os.path.basename(str(name)))
            raise FileNotFoundError(name)
        return io.BufferedReader(RangedReader(volume), buffer_size=range_bytes)

    first = min(by_name, key=lambda name: classify(name).order)
    rarfile.open = open_volume  # rarfile's XFile opens volumes by name with the builtin
    try:
        entries = rar_list([first], limits, password)
    finally:
        del rarfile.open
    if asked_for_missing:
        raise ListingError(f"The rar set goes on in {asked_for_missing[0]}, which is not one of its volumes.")
    return entries
