"""Zip: the central directory, read from the end; split sets (.z01… .zip, or .001…) read as one stream."""

import zipfile
from pathlib import Path

import multivolumefile

from packages.archives.entries import Entry, Limits, ListingError, entries_check, entry_count_check, entry_make
from packages.archives.streams import JoinedVolumes, split_zip_order, volume_base

_ZIP_UTF8_FLAG = 0x800
ENCRYPTED_FLAG = 0x1
_S_IFMT, _S_IFLNK = 0o170000, 0o120000


def zip_volumes_open(volumes: list[Path]):
    """One stream over a zip set's staged volumes."""
    if len(volumes) > 1 and volumes[0].name.lower().endswith(".001"):
        return multivolumefile.open(volume_base(volumes[0]), mode="rb")
    # A split set (`zip -s`: .z01, .z02…, then .zip) read as one stream: its central directory may start in
    # one volume and end in the next, and zipfile finds it from the end (offsets within a volume add up,
    # as the volumes before it are all there).
    return JoinedVolumes(sorted(volumes, key=split_zip_order))


def zip_list(volumes: list[Path], limits: Limits) -> list[Entry]:
    with zip_volumes_open(volumes) as stream:
        return zip_entries(stream, limits)


def zip_entries(stream, limits: Limits) -> list[Entry]:
    end_record = zipfile._EndRecData(stream)  # the end of central directory record, read before any entry
    if end_record is None:
        raise ListingError("Cannot read the archive listing: this is not a zip file (no central directory).")
    entry_count_check(end_record[zipfile._ECD_ENTRIES_TOTAL], limits)
    stream.seek(0)
    with zipfile.ZipFile(stream) as archive:
        infos = archive.infolist()
        entry_count_check(len(infos), limits)
        return entries_check(
            [
                entry_make(
                    zip_name(info),
                    info.file_size,
                    info.compress_size,
                    info.CRC,
                    link=(info.external_attr >> 16) & _S_IFMT == _S_IFLNK,
                    limits=limits,
                    encrypted=bool(info.flag_bits & ENCRYPTED_FLAG),  # ZipCrypto, and AES (method 99)
                    header_offset=info.header_offset,
                )
                for info in infos
                if not info.is_dir()
            ],
            limits,
        )


def zip_name(info: zipfile.ZipInfo) -> str:
    """Names without the UTF-8 flag: UTF-8 when they decode as such (many tools omit the flag), else cp437."""
    if info.flag_bits & _ZIP_UTF8_FLAG:
        return info.orig_filename
    try:
        return info.orig_filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return info.orig_filename
