"""Hostile archives, built byte by byte: zip bombs, lying headers, traversal paths, odd names.

`zipfile` refuses to write most of these, so `raw_zip` writes the local headers, the central
directory and its end record itself (APPNOTE 6.3: no data descriptors, zip64 only where a size
needs it).
"""

import io
import struct
import zlib
from dataclasses import dataclass
from pathlib import Path

import py7zr

GIB = 1024**3
UTF8_FLAG = 0x800
STORED, DEFLATED = 0, 8
DOS_DATE, DOS_TIME = (2024 - 1980) << 9 | 1 << 5 | 1, 0
SYMLINK_ATTR = (0o120777 << 16) | 0x3 << 0  # unix mode in the high half, as Info-ZIP writes it


@dataclass
class RawEntry:
    name: bytes
    data: bytes = b""  # as stored (already compressed for DEFLATED)
    method: int = STORED
    crc: int | None = None  # of the uncompressed bytes; computed from data when STORED
    size: int | None = None  # declared uncompressed size; len(data) when None
    flags: int = 0
    external_attr: int = 0o644 << 16


def raw_zip(path: Path, entries: list[RawEntry], *, declared_count: int | None = None) -> Path:
    """A zip whose headers say exactly what the entries say, true or not."""
    out = io.BytesIO()
    central = io.BytesIO()
    for entry in entries:
        size = len(entry.data) if entry.size is None else entry.size
        crc = zlib.crc32(entry.data) if entry.crc is None else entry.crc
        offset = out.tell()
        zip64 = size >= 0xFFFFFFFF
        extra = struct.pack("<HHQ", 1, 8, size) if zip64 else b""
        header_size = 0xFFFFFFFF if zip64 else size
        out.write(
            struct.pack(
                "<IHHHHHIIIHH",
                0x04034B50,
                45 if zip64 else 20,
                entry.flags,
                entry.method,
                DOS_TIME,
                DOS_DATE,
                crc,
                len(entry.data),
                header_size,
                len(entry.name),
                len(extra),
            )
        )
        out.write(entry.name + extra + entry.data)
        central.write(
            struct.pack(
                "<IHHHHHHIIIHHHHHII",
                0x02014B50,
                3 << 8 | 45,  # made by unix, so the mode in external_attr counts
                45 if zip64 else 20,
                entry.flags,
                entry.method,
                DOS_TIME,
                DOS_DATE,
                crc,
                len(entry.data),
                header_size,
                len(entry.name),
                len(extra),
                0,
                0,
                0,
                entry.external_attr,
                offset,
            )
        )
        central.write(entry.name + extra)
    cd_offset, cd = out.tell(), central.getvalue()
    out.write(cd)
    count = len(entries) if declared_count is None else declared_count
    if count > 0xFFFF:
        # The classic end record caps the count at 65535; a zip64 end record (and its locator) carries it.
        zip64_offset = out.tell()
        out.write(struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, len(cd), cd_offset))
        out.write(struct.pack("<IIQI", 0x07064B50, 0, zip64_offset, 1))
    capped = min(count, 0xFFFF)
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, capped, capped, len(cd), cd_offset, 0))
    path.write_bytes(out.getvalue())
    return path


def deflated_zeros(size: int) -> tuple[bytes, int]:
    """A raw deflate stream of `size` zero bytes and their CRC, built without compressing them all.

    A segment ending in a full flush starts fresh, so copies of it concatenate into one valid stream.
    """
    segment_size = 16 * 1024 * 1024
    assert size % segment_size == 0
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    zeros = bytes(segment_size)
    segment = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    stream = segment * (size // segment_size) + compressor.flush(zlib.Z_FINISH)
    crc = 0
    for _ in range(size // segment_size):
        crc = zlib.crc32(zeros, crc)
    return stream, crc


def zip_bomb(path: Path, *, size: int = GIB) -> Path:
    """One entry of `size` zeros, deflated: about a thousandth of it on disk."""
    stream, crc = deflated_zeros(size)
    return raw_zip(path, [RawEntry(b"zeros.bin", stream, DEFLATED, crc=crc, size=size)])


def lying_zip(path: Path, *, declared: int) -> Path:
    """A few bytes that declare `declared` bytes uncompressed."""
    return raw_zip(path, [RawEntry(b"huge.stl", b"\x03\x00", DEFLATED, crc=0, size=declared)])


def many_entries_zip(path: Path, count: int) -> Path:
    return raw_zip(path, [RawEntry(f"dir{n % 100}/part{n}.stl".encode()) for n in range(count)])


def traversal_zip(path: Path) -> Path:
    names = [
        b"../../evil.txt",
        b"/etc/cron.d/evil",
        b"C:\\Windows\\System32\\evil.dll",
        b"..\\..\\win-evil.txt",
        b"models/../../../up.stl",
        b"models/./ok/../fine.stl",
        b"safe/body.stl",
    ]
    return raw_zip(path, [RawEntry(name, b"x") for name in names])


def symlink_zip(path: Path) -> Path:
    return raw_zip(path, [RawEntry(b"link", b"../../etc", external_attr=SYMLINK_ATTR), RawEntry(b"body.stl", b"x")])


def odd_names_zip(path: Path) -> Path:
    return raw_zip(
        path,
        [
            RawEntry("ドラゴン/胴体.stl".encode("shift_jis")),  # Shift-JIS without the UTF-8 flag
            RawEntry("Дракон/тело.stl".encode("cp866")),  # Russian DOS code page
            RawEntry("café/crème.stl".encode()),  # UTF-8 without the flag
            RawEntry("flagged/ü.stl".encode(), flags=UTF8_FLAG),
            RawEntry(b"bell\x07and\x1b[31mred.stl"),
            RawEntry(b"\x7fdel.stl"),
        ],
    )


def encrypted_header_7z(path: Path) -> Path:
    with py7zr.SevenZipFile(path, "w", password="hunter2", header_encryption=True) as archive:
        archive.writestr(b"secret geometry", "inside.stl")
    return path


def truncated_7z_volumes(folder: Path, *, name: str = "cut.7z", volume_size: int = 4096) -> list[Path]:
    """A 7z split into volumes whose last volume lost its end (and with it the header)."""
    buffer = io.BytesIO()
    with py7zr.SevenZipFile(buffer, "w", filters=[{"id": py7zr.FILTER_COPY}]) as archive:
        archive.writestr(bytes(range(256)) * 60, "a.stl")
        archive.writestr(b"b" * 5000, "b.stl")
    data = buffer.getvalue()
    volumes = []
    for number, start in enumerate(range(0, len(data), volume_size), start=1):
        volume = folder / f"{name}.{number:03d}"
        volume.write_bytes(data[start : start + volume_size])
        volumes.append(volume)
    last = volumes[-1]
    last.write_bytes(last.read_bytes()[: max(1, last.stat().st_size // 3)])
    return volumes


def not_a_zip(path: Path) -> Path:
    path.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 40)
    return path
