import os
from pathlib import Path

import pytest

from ingestion.staging import BLOCK, StagingFile


@pytest.mark.parametrize("folder", ["tmp", "shm"])
@pytest.mark.parametrize("size", [0, 1, 512 * 1024, BLOCK, BLOCK + 4097, 3 * BLOCK - 1])
def test_staged_bytes_are_exactly_what_was_written(tmp_path, folder, size):
    if folder == "shm":
        if not Path("/dev/shm").is_dir():
            pytest.skip("no /dev/shm here")
        tmp_path = Path("/dev/shm")  # tmpfs refuses O_DIRECT: the buffered path
    data = os.urandom(size)
    path = tmp_path / f"staged-{size}.bin"
    try:
        with StagingFile(path) as sink:
            for start in range(0, size, 300_001):
                sink.write(data[start : start + 300_001])
        assert path.read_bytes() == data
    finally:
        path.unlink(missing_ok=True)
