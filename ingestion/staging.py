"""Staging files: downloads written to disk in large aligned blocks.

On Linux the blocks bypass the page cache (O_DIRECT): writing a 1 GiB download
through the cache costs several times the CPU of hashing it, and the staged
bytes are read once more at most (by the upload). Where O_DIRECT is not
available the same class writes through an ordinary large buffer.

A process that dies mid-file leaves every whole block written: the file's
length is where a download resumes (`partial_resume_point`). The whole downloads
of a run stopped by an outage (the object store, the database, a lost lock)
are put back there, so the next attempt does not fetch them again.
"""

import fcntl
import mmap
import os

BLOCK = 8 * 1024 * 1024  # a multiple of every filesystem's direct-I/O alignment
PARTIAL_FOLDER = "partial"  # under INGEST_STAGING_DIR: downloads not yet whole, kept past their run


class StagingFile:
    """Writes from the start, or from `resume_at` (a multiple of BLOCK's alignment): what is beyond it goes."""

    def __init__(self, path, *, resume_at: int = 0):
        flags = os.O_WRONLY | os.O_CREAT
        direct = getattr(os, "O_DIRECT", 0)
        try:
            self._fd = os.open(path, flags | direct, 0o644)
            self._direct = bool(direct)
        except OSError:  # tmpfs and some others refuse O_DIRECT
            self._fd = os.open(path, flags, 0o644)
            self._direct = False
        os.ftruncate(self._fd, resume_at)
        os.lseek(self._fd, resume_at, os.SEEK_SET)
        self._block = mmap.mmap(-1, BLOCK)  # page-aligned, as O_DIRECT needs
        self._fill = 0

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            taken = min(len(view), BLOCK - self._fill)
            self._block[self._fill : self._fill + taken] = view[:taken]
            self._fill += taken
            view = view[taken:]
            if self._fill == BLOCK:
                self._write_all(memoryview(self._block))
                self._fill = 0

    def close(self) -> None:
        try:
            if self._fill:
                if self._direct:
                    # The tail is not block-sized; write it through the cache.
                    fcntl.fcntl(self._fd, fcntl.F_SETFL, fcntl.fcntl(self._fd, fcntl.F_GETFL) & ~os.O_DIRECT)
                self._write_all(memoryview(self._block)[: self._fill])
                self._fill = 0
        finally:
            os.close(self._fd)
            self._block.close()

    def _write_all(self, view: memoryview) -> None:
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        self.close()


def partial_resume_point(path, *, size: int, part_size: int) -> int:
    """Where the download of a file left at `path` by an earlier attempt goes on: its whole parts (none when
    there is no such file, or it is longer than the document)."""
    try:
        held = os.path.getsize(path)
    except FileNotFoundError:
        return 0
    if held > size:
        return 0
    if held == size:  # downloaded whole, then kept through an outage: nothing to fetch again
        return size
    return held - held % part_size


def read_blocks(path, length: int):
    """The first `length` bytes of a file, in BLOCK-sized reads."""
    with open(path, "rb", buffering=0) as file:
        while length > 0:
            block = file.read(min(BLOCK, length))
            if not block:
                raise OSError(f"{path} ended {length} bytes early")
            length -= len(block)
            yield block
