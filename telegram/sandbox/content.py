"""Deterministic bytes of sandbox documents: seeded opaque data, real archives, volumes.

Opaque data is never stored: any range of it is regenerated from (seed, size), one
1 MiB block at a time. Archives are real .zip / .7z files whose entries hold seeded
bytes, built byte-identically every time, so the same archive posted twice has one
content hash.
"""

import functools
import hashlib
import io
import mimetypes
import random
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import py7zr
from PIL import Image, ImageDraw
from py7zr.helpers import ArchiveTimestamp

BLOCK = 1024 * 1024
ARCHIVE_DATE = datetime(2024, 1, 1, tzinfo=UTC)  # every archive entry's timestamp
ARCHIVE_SUFFIXES = (".zip", ".7z")
MIME_TYPES = {
    ".7z": "application/x-7z-compressed",
    ".zip": "application/zip",
    ".rar": "application/vnd.rar",
    ".stl": "model/stl",
    ".3mf": "model/3mf",
    ".obj": "model/obj",
}


def seeded_read(*, seed: str | int, size: int, offset: int = 0, length: int | None = None) -> bytes:
    """Bytes [offset, offset + length) of the `size` bytes generated from `seed`."""
    end = size if length is None else min(size, offset + length)
    if offset >= end:
        return b""
    first, last = offset // BLOCK, (end - 1) // BLOCK
    if first == last:
        start = first * BLOCK
        return _seeded_block(seed, first, min(BLOCK, size - start))[offset - start : end - start]
    out = bytearray()
    for block in range(first, last + 1):
        start = block * BLOCK
        data = _seeded_block(seed, block, min(BLOCK, size - start))
        out += data[max(offset - start, 0) : end - start]
    return bytes(out)


@functools.lru_cache(maxsize=16)
def _seeded_block(seed: str | int, block: int, length: int) -> bytes:
    # Kept a while: a client reads a block in several requests (Telegram's parts are at most 512 KiB).
    return random.Random(f"{seed}:{block}").randbytes(length)


def archive_kind(name: str) -> str | None:
    """'zip' or '7z' from the file name; None for anything the sandbox cannot build."""
    lowered = name.lower()
    for suffix in ARCHIVE_SUFFIXES:
        if lowered.endswith(suffix):
            return suffix[1:]
    return None


PICTURE_SIZE = (640, 480)


def picture(*, seed: str, name: str = "photo.jpg") -> bytes:
    """A real picture (PNG for a .png name, else JPEG), the same bytes for the same seed: a few coloured
    shapes on a coloured ground, so previews and thumbnails have something to show."""
    digest = hashlib.sha256(seed.encode()).digest()
    image = Image.new("RGB", PICTURE_SIZE, tuple(digest[0:3]))
    draw = ImageDraw.Draw(image)
    for index in range(4):
        x, y = digest[4 + index] * 2, digest[8 + index] * 2 % 400
        colour = tuple(digest[12 + index * 3 : 15 + index * 3])
        draw.ellipse((x, y, x + 80 + digest[24 + index] // 2, y + 80 + digest[28 + index] // 2), fill=colour)
    out = io.BytesIO()
    image.save(out, format="PNG" if name.lower().endswith(".png") else "JPEG", quality=85)
    return out.getvalue()


def entry_bytes(entry: dict) -> bytes:
    """An archive entry's content: a real picture when it says `picture`, a real model when it names a `model`
    shape (models3d.SHAPES), else seeded bytes; seeded by its path unless it names a seed."""
    seed = str(entry.get("seed", entry["path"]))
    if entry.get("model"):
        from telegram.sandbox.models3d import model_bytes  # numpy and trimesh only where a world has models

        return model_bytes(entry["model"], entry["path"])
    if entry.get("picture"):
        return picture(seed=seed, name=entry["path"])
    return seeded_read(seed=seed, size=entry["size"])


def archive_write(*, path: Path, name: str, entries: list[dict]) -> None:
    """Write a real archive of the kind `name` says, holding `entries` ({"path", "size"[, "seed"]})."""
    kind = archive_kind(name)
    if kind == "zip":
        with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as archive:
            for entry in entries:
                info = zipfile.ZipInfo(entry["path"], date_time=ARCHIVE_DATE.timetuple()[:6])
                info.external_attr = 0o644 << 16
                archive.writestr(info, entry_bytes(entry))
    elif kind == "7z":
        stamp = ArchiveTimestamp.from_datetime(ARCHIVE_DATE.timestamp())
        # Stored (like `7z -mx0`): fast to build and as big as its entries, so volume sets split as written.
        with py7zr.SevenZipFile(path, "w", filters=[{"id": py7zr.FILTER_COPY}]) as archive:
            for entry in entries:
                archive.writestr(entry_bytes(entry), entry["path"])
                # py7zr stamps entries with the current time; pin them so rebuilds are byte-identical.
                info = archive.header.files_info.files[-1]
                for key in ("creationtime", "lastwritetime", "lastaccesstime"):
                    info[key] = stamp
    else:
        raise ValueError(f"{name}: the sandbox builds only {' and '.join(ARCHIVE_SUFFIXES)} archives")


def volume_name(name: str, index: int) -> str:
    """The name of volume `index` (from 1) of a byte-split document: big.7z.001, noise.bin.002."""
    return f"{name}.{index:03d}"


def volume_ranges(*, size: int, volume_size: int) -> list[tuple[int, int]]:
    """(start, length) of each volume when `size` bytes are split every `volume_size` bytes."""
    return [(start, min(volume_size, size - start)) for start in range(0, max(size, 1), volume_size)]


def mime_type(name: str) -> str:
    suffix = Path(name).suffix.lower()
    return MIME_TYPES.get(suffix) or mimetypes.guess_type(name)[0] or "application/octet-stream"
