"""Seekable readers over several volumes: what zipfile, py7zr and rarfile need to read a set as one file."""

import bisect
import io
from pathlib import Path


class SeekableReader(io.RawIOBase):
    """A raw reader of `size` bytes at `position`; subclasses say how bytes are read (`readinto`)."""

    size = 0
    position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def tell(self) -> int:
        return self.position


class JoinedVolumes(SeekableReader):
    """Several files (paths, or seekable readers) read as one, seekable: enough for zipfile to list a split set."""

    def __init__(self, volumes: list):
        # Paths are opened here and closed by close().
        self.files = [open(v, "rb") if isinstance(v, Path) else v for v in volumes]  # noqa: SIM115
        self.starts = []
        total = 0
        for file in self.files:
            self.starts.append(total)
            total += file.seek(0, io.SEEK_END)
        self.size = total
        self.position = 0

    def readinto(self, buffer) -> int:
        view, done = memoryview(buffer), 0
        while done < len(view) and self.position < self.size:
            index = bisect.bisect_right(self.starts, self.position) - 1
            file = self.files[index]
            file.seek(self.position - self.starts[index])
            count = file.readinto(view[done:])
            if not count:
                break
            done += count
            self.position += count
        return done

    def close(self) -> None:
        for file in self.files:
            file.close()
        super().close()


def split_zip_order(volume: Path) -> tuple[int, int]:
    """A `zip -s` set in reading order: .z01, .z02…, then the .zip."""
    suffix = volume.suffix.lower()
    if len(suffix) >= 3 and suffix[1] == "z" and suffix[2:].isdecimal():
        return 0, int(suffix[2:])
    return 1, 0


def volume_base(first_volume: Path) -> Path:
    """multivolumefile opens `name.7z` from `name.7z.001`, `name.7z.002`…"""
    return first_volume.with_name(first_volume.name[: -len(".001")])
