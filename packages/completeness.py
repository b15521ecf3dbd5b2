"""Whether a volume set is whole, read from what its archives say about themselves.

A few bytes of the volumes already posted decide it, read where they lie (a ranged read, never a download):

- a 7z split (`name.7z.001`…): the start header of the first volume gives the archive's total size
  (32 + next header offset + next header size); the set is whole once its volumes add up to it;
- a zip split by bytes (`name.zip.001`…, its first volume starting as a zip does): a zip ends with its end of
  central directory record, which says where the central directory starts and how long it is; the set is
  whole once the last volume ends with one that fits its place;
- a RAR set (`name.partN.rar`, `name.rNN`, `name.rar.001`…): every RAR volume ends with an end-of-archive
  block whose flag says whether more volumes follow (RAR 4: ENDARC_HEAD, flag 0x0001; RAR 5: end of archive
  header, flag 0x0001); the set is whole when the last volume's says none does;
- a zip spanned by `zip -s` (`name.z01`…, `name.zip`): the naming says it, the `.zip` closes the set.

What none of these can read (bytes that are no archive the rule knows) is opaque: the set then waits by time.
"""

import struct
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from core.sizes import size_text
from packages.detection import RAR, SEVEN_ZIP, ZIP, ArchiveSet

# (volume index, offset, length) -> the bytes there: the caller's ranged read of a posted volume.
VolumeReader = Callable[[int, int, int], Awaitable[bytes]]

SEVEN_ZIP_SIGNATURE = b"7z\xbc\xaf\x27\x1c"
SEVEN_ZIP_START_HEADER = struct.Struct("<6s2sIQQI")  # signature, version, CRC, next offset, next size, CRC
ZIP_EOCD = struct.Struct("<4sHHHHIIH")  # signature, disk, cd disk, entries here, entries, cd size, cd offset, comment
ZIP_EOCD_SIGNATURE = b"PK\x05\x06"
ZIP_LOCAL_SIGNATURE, ZIP_SPLIT_SIGNATURE = b"PK\x03\x04", b"PK\x07\x08"  # a zip's first bytes
ZIP64_LOCATOR = struct.Struct("<4sIQI")
ZIP64_LOCATOR_SIGNATURE = b"PK\x06\x07"
ZIP64_EOCD = struct.Struct("<4sQHHIIQQQQ")
ZIP_TAIL = ZIP_EOCD.size + 0xFFFF  # the record plus the longest comment it may carry
RAR_TAIL = 64  # an end-of-archive block is at most a few dozen bytes, at the very end of its volume
RAR4_END, RAR4_NEXT_VOLUME = 0x7B, 0x0001
RAR5_END, RAR5_NEXT_VOLUME = 5, 0x0001


@dataclass(frozen=True)
class SetVerdict:
    """`whole`: True (take it now), False (more volumes will come), None (the bytes cannot tell: wait by
    time). `rule` says, in the operator's words, what decided."""

    whole: bool | None
    rule: str


OPAQUE = "the volumes' bytes do not say whether the set is whole"


async def set_verdict(*, archive_set: ArchiveSet, sizes: list[int], read: VolumeReader) -> SetVerdict:
    """What the set's own bytes say about its being whole (volumes in set order, `sizes` theirs)."""
    schemes = {volume.scheme for volume in archive_set.volumes}
    if "spanned" in schemes or (archive_set.archive_type == ZIP and schemes == {"single"}):
        return SetVerdict(True, f"zip split naming: {archive_set.base}.zip closes the set")
    if archive_set.archive_type == SEVEN_ZIP:
        return _seven_zip(await read(0, 0, SEVEN_ZIP_START_HEADER.size), total=sum(sizes))
    if archive_set.archive_type == ZIP:
        if not (await read(0, 0, len(ZIP_LOCAL_SIGNATURE))).startswith((ZIP_LOCAL_SIGNATURE, ZIP_SPLIT_SIGNATURE)):
            return SetVerdict(None, OPAQUE)  # no zip: its missing end says nothing
        tail = min(ZIP_TAIL, sizes[-1])
        return _zip(await read(len(sizes) - 1, sizes[-1] - tail, tail), total=sum(sizes))
    if archive_set.archive_type == RAR:
        tail = min(RAR_TAIL, sizes[-1])
        return _rar(await read(len(sizes) - 1, sizes[-1] - tail, tail), volume=archive_set.volumes[-1].file_name)
    return SetVerdict(None, OPAQUE)


def _seven_zip(head: bytes, *, total: int) -> SetVerdict:
    if len(head) < SEVEN_ZIP_START_HEADER.size or not head.startswith(SEVEN_ZIP_SIGNATURE):
        return SetVerdict(None, OPAQUE)
    _, _, start_crc, next_offset, next_size, next_crc = SEVEN_ZIP_START_HEADER.unpack(head)
    if zlib.crc32(head[12:32]) != start_crc:
        return SetVerdict(None, OPAQUE)
    expected = SEVEN_ZIP_START_HEADER.size + next_offset + next_size
    if total >= expected:
        return SetVerdict(True, f"7z start header: the archive is {size_text(expected)} and all of it is posted")
    posted = f"{size_text(total)} of it is posted so far"
    return SetVerdict(False, f"7z start header: the archive is {size_text(expected)}; {posted}")


def _zip(tail: bytes, *, total: int) -> SetVerdict:
    """The last end of central directory record in the tail whose directory ends right where it starts."""
    start = len(tail)
    while (start := tail.rfind(ZIP_EOCD_SIGNATURE, 0, start)) >= 0:
        if start + ZIP_EOCD.size > len(tail):
            continue
        _, disk, _, _, _, cd_size, cd_offset, comment = ZIP_EOCD.unpack_from(tail, start)
        at = total - len(tail) + start  # the record's place in the whole archive
        if start + ZIP_EOCD.size + comment != len(tail) or disk != 0:
            continue
        if cd_offset == 0xFFFFFFFF or cd_size == 0xFFFFFFFF:
            at, cd_size, cd_offset = _zip64(tail, start, at)
        if cd_offset + cd_size == at:
            return SetVerdict(True, "zip end of central directory: the archive ends in the last volume posted")
    return SetVerdict(False, "zip end of central directory: not at the end of the last volume posted yet")


def _zip64(tail: bytes, start: int, at: int) -> tuple[int, int, int]:
    """(where the zip64 record is, central directory size, offset) from the locator before the record."""
    locator = start - ZIP64_LOCATOR.size
    if locator < 0 or tail[locator : locator + 4] != ZIP64_LOCATOR_SIGNATURE:
        return at, 0, -1
    _, _, record_offset, _ = ZIP64_LOCATOR.unpack_from(tail, locator)
    record = locator - ZIP64_EOCD.size
    if record < 0 or tail[record : record + 4] != b"PK\x06\x06":
        return at, 0, -1
    fields = ZIP64_EOCD.unpack_from(tail, record)
    return record_offset, fields[8], fields[9]


def _rar(tail: bytes, *, volume: str) -> SetVerdict:
    """The end-of-archive block at the end of the last volume (padding may follow it), its CRC checked."""
    for start in range(len(tail) - 7, -1, -1):
        more = _rar4_end(tail, start)
        if more is None:
            more = _rar5_end(tail, start)
        if more is None:
            continue
        if more:
            return SetVerdict(False, f"RAR end of archive: {volume} says more volumes follow")
        return SetVerdict(True, f"RAR end of archive: {volume} is the last volume")
    return SetVerdict(None, OPAQUE)


def _rar4_end(tail: bytes, start: int) -> bool | None:
    crc, kind, flags, size = struct.unpack_from("<HBHH", tail, start)
    if kind != RAR4_END or size < 7 or start + size > len(tail):
        return None
    if zlib.crc32(tail[start + 2 : start + size]) & 0xFFFF != crc:
        return None
    return bool(flags & RAR4_NEXT_VOLUME)


def _rar5_end(tail: bytes, start: int) -> bool | None:
    (crc,) = struct.unpack_from("<I", tail, start)
    fields, position = [], start + 4
    for _ in range(4):  # header size, type, header flags, end of archive flags: one-byte vints here
        if position >= len(tail) or tail[position] & 0x80:
            return None
        fields.append(tail[position])
        position += 1
    size, kind, _, end_flags = fields
    if kind != RAR5_END or size != 3 or zlib.crc32(tail[start + 4 : start + 5 + size]) != crc:
        return None
    return bool(end_flags & RAR5_NEXT_VOLUME)
