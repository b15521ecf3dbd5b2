"""One file out of a kept archive, never the whole archive.

A zip member is read where it lies: its local header, then its compressed bytes, by ranged reads from the
offset the listing kept (stored or deflated, inflated as it streams; its CRC checked at the end). Any other
member (7z, RAR, solid or not, a split zip, another compression method) is written out by the listing child,
with its memory ceiling and time limit, to a file the caller serves and removes.
"""

import struct
import zlib
from collections.abc import Iterator

from packages.archives.entries import ListingError

_LOCAL_HEADER = struct.Struct("<4s5H3L2H")  # signature … name length, extra length: 30 bytes
_LOCAL_SIGNATURE = b"PK\x03\x04"
STORED, DEFLATED = 0, 8
MEMBER_CHUNK_BYTES = 256 * 1024
# The child holds a 7z member in memory (py7zr's extraction factory) under its 1 GiB ceiling.
MEMBER_EXTRACT_MAX_BYTES = 512 * 1024**2


class MemberUnreadable(ListingError):
    """The file cannot be read out of the archive; the message says why."""


class NotDirect(Exception):
    """This member cannot be read in place (its compression): the child writes it out instead."""


def zip_member_chunks(reader, *, header_offset: int, compressed_size: int, size: int, crc32: int | None) -> Iterator:
    """The member's bytes, `reader` being a seekable binary file over the whole zip (a kept file, or ranged
    reads of an object). Raises NotDirect before any byte when the method is neither stored nor deflated;
    MemberUnreadable when the bytes are not what the listing said (the stream then stops short)."""
    reader.seek(header_offset)
    header = reader.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size or header[:4] != _LOCAL_SIGNATURE:
        raise MemberUnreadable("The archive has no file header where its listing says; it changed or is damaged.")
    fields = _LOCAL_HEADER.unpack(header)
    flags, method, name_length, extra_length = fields[2], fields[3], fields[9], fields[10]
    if flags & 0x1:
        raise MemberUnreadable("This file is encrypted: reading it out needs the password.")
    if method not in (STORED, DEFLATED):
        raise NotDirect
    reader.seek(header_offset + _LOCAL_HEADER.size + name_length + extra_length)
    return _inflated(reader, method=method, compressed_size=compressed_size, size=size, crc32=crc32)


def _inflated(reader, *, method: int, compressed_size: int, size: int, crc32: int | None) -> Iterator[bytes]:
    inflater = zlib.decompressobj(-zlib.MAX_WBITS) if method == DEFLATED else None
    left, made, crc = compressed_size, 0, 0
    while left > 0:
        chunk = reader.read(min(MEMBER_CHUNK_BYTES, left))
        if not chunk:
            raise MemberUnreadable("The archive ends before this file does.")
        left -= len(chunk)
        # Never more than the listing's size: a member that inflates past it is a bomb, or damaged.
        data = chunk if inflater is None else inflater.decompress(chunk, size - made + 1)
        made += len(data)
        if made > size:
            raise MemberUnreadable("This file inflates past the size its listing declares (damaged or crafted).")
        crc = zlib.crc32(data, crc)
        yield data
    if made != size or (crc32 is not None and crc != crc32):
        raise MemberUnreadable("This file's bytes do not match its listing (size or checksum); it is damaged.")


def member_extract(archive_type: str, volumes: list, path: str, out: str) -> dict:
    """In the child: the file listed as `path` written to `out`; {} when done, {"error": why} when not."""
    from packages.archives.entries import reason_text
    from packages.archives.thumbnails import members_read

    try:
        for _, data in members_read(archive_type, volumes, {path}, MEMBER_EXTRACT_MAX_BYTES + 1):
            if len(data) > MEMBER_EXTRACT_MAX_BYTES:
                return {"error": f"This file is above {MEMBER_EXTRACT_MAX_BYTES // 1024**2} MiB: download the archive."}
            with open(out, "wb") as sink:
                sink.write(data)
            return {}
    except MemoryError:
        return {"error": "Reading this file out needed more memory than the reading child may take."}
    except Exception as exc:  # a wrong password, a damaged archive, a reader that needs a tool
        return {"error": reason_text(f"This file cannot be read out of the archive: {exc.__class__.__name__}: {exc}")}
    return {"error": "This file is not in the archive (or is a folder)."}
