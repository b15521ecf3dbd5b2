"""Staging files: downloads written to disk in large aligned blocks.

On Linux the blocks bypass the page cache (O_DIRECT): writing a 1 GiB download
through the cache costs several times the CPU of hashing it, and the staged
bytes are read once more at most (by the upload). Where O_DIRECT is not
available the same class writes through an ordinary large buffer.
"""

import fcntl
import mmap
import os

BLOCK = 8 * 1024 * 1024  # a multiple of every filesystem's direct-I/O alignment


class StagingFile:
    def __init__(self, path):
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        direct = getattr(os, "O_DIRECT", 0)
        try:
            self._fd = os.open(path, flags | direct, 0o644)
            self._direct = bool(direct)
        except OSError:  # tmpfs and some others refuse O_DIRECT
            self._fd = os.open(path, flags, 0o644)
            self._direct = False
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
