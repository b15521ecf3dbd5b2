"""Volumes above Telegram's upload limit, split into parts that re-join with `cat`, proven before upload."""

import hashlib
from dataclasses import dataclass
from pathlib import Path

from packages.raw_objects import COPY_CHUNK, disk_name


@dataclass(frozen=True)
class UploadPart:
    name: str
    volume_index: int
    offset: int
    length: int


def upload_plan(*, volumes: list[tuple[str, int]], limit: int) -> list[UploadPart]:
    """Volumes above the upload limit become `<name>.001`… parts that re-join with `cat`."""
    parts = []
    for index, (name, size) in enumerate(volumes):
        if size <= limit:
            parts.append(UploadPart(name=name, volume_index=index, offset=0, length=size))
            continue
        count = -(-size // limit)
        for number in range(count):
            offset = number * limit
            parts.append(
                UploadPart(
                    name=f"{name}.{number + 1:03d}",
                    volume_index=index,
                    offset=offset,
                    length=min(limit, size - offset),
                )
            )
    return parts


class SplitMismatch(Exception):
    """The split parts do not re-join to the original bytes."""


def part_write(*, source: Path, part: UploadPart, target: Path, digest=None) -> None:
    """Copy one byte range into its own file, feeding what was written to `digest`."""
    remaining = part.length
    with open(source, "rb") as reader, open(target, "wb") as writer:
        reader.seek(part.offset)
        while remaining:
            chunk = reader.read(min(COPY_CHUNK, remaining))
            if not chunk:
                raise SplitMismatch(f"{source.name} ended {remaining} bytes early while writing {part.name}")
            writer.write(chunk)
            if digest is not None:
                digest.update(chunk)
            remaining -= len(chunk)


def volume_split(*, source: Path, parts: list[UploadPart], folder: Path, expected_sha256: str) -> list[Path]:
    """Write a volume's parts and prove that they re-join (`cat`) to the volume's bytes."""
    digest = hashlib.sha256()
    written = []
    try:
        for part in parts:
            target = folder / disk_name(part.name)
            part_write(source=source, part=part, target=target, digest=digest)
            written.append(target)
        if digest.hexdigest() != expected_sha256:
            raise SplitMismatch(
                f"the parts of {source.name} re-join to SHA-256 {digest.hexdigest()}, not {expected_sha256}"
            )
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        raise
    return written
