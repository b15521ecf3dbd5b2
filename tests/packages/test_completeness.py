"""Sets that say when they are whole: real split sets made at test time by Debian's `7z` and `zip`, and the
real RAR volume sets of tests/fixtures/rar, judged from a few bytes of the volumes posted so far."""

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from packages.completeness import set_verdict
from packages.detection import group_sets

RAR_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rar"


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"`{name}` is needed for these tests: apt-get install zip p7zip-full (as .ci/run does)")
    return path


def made(tmp_path: Path, command: list[str]) -> list[Path]:
    """Run the tool on 250 kB of random bytes (so the volumes are not squeezed away) and return what it made."""
    source = tmp_path / "src"
    source.mkdir()
    (source / "body.stl").write_bytes(os.urandom(250_000))
    out = tmp_path / "out"
    out.mkdir()
    subprocess.run(command, cwd=source, check=True, capture_output=True)
    return sorted(out.iterdir())


def verdict(paths: list[Path]):
    """The verdict on these volumes, as posted; every read is counted (volume, offset, length)."""
    (archive_set,) = group_sets(paths, name_of=lambda path: path.name)
    volumes = archive_set.items
    reads = []

    async def read(index: int, offset: int, length: int) -> bytes:
        reads.append((index, offset, length))
        with open(volumes[index], "rb") as volume:
            volume.seek(offset)
            return volume.read(length)

    sizes = [path.stat().st_size for path in volumes]
    return asyncio.run(set_verdict(archive_set=archive_set, sizes=sizes, read=read)), reads


def test_a_7z_split_says_its_total_size_in_its_start_header(tmp_path):
    volumes = made(tmp_path, [tool("7z"), "a", "-v100k", "-mx0", str(tmp_path / "out" / "set.7z"), "body.stl"])
    assert [path.name for path in volumes] == ["set.7z.001", "set.7z.002", "set.7z.003"]

    whole, reads = verdict(volumes)
    so_far, _ = verdict(volumes[:2])

    assert whole.whole is True and whole.rule.startswith("7z start header: the archive is ")
    assert reads == [(0, 0, 32)], "the start header only"
    assert so_far.whole is False and "posted so far" in so_far.rule


def test_a_zip_split_by_bytes_ends_with_its_central_directory(tmp_path):
    volumes = made(tmp_path, [tool("7z"), "a", "-tzip", "-v100k", "-mx0", str(tmp_path / "out" / "set.zip"), "."])
    assert [path.name for path in volumes] == ["set.zip.001", "set.zip.002", "set.zip.003"]

    whole, reads = verdict(volumes)
    so_far, _ = verdict(volumes[:2])

    assert whole.whole is True and whole.rule.startswith("zip end of central directory")
    assert [index for index, _, _ in reads] == [0, 2], "the first volume's signature, the last volume's tail"
    assert so_far.whole is False


def test_a_zip_spanned_by_zip_is_closed_by_its_dot_zip(tmp_path):
    volumes = made(tmp_path, [tool("zip"), "-q", "-0", "-s", "100k", str(tmp_path / "out" / "set.zip"), "body.stl"])
    assert [path.name for path in volumes] == ["set.z01", "set.z02", "set.zip"]

    whole, reads = verdict(volumes)

    assert (whole.whole, whole.rule, reads) == (True, "zip split naming: set.zip closes the set", [])


@pytest.mark.parametrize(
    "names",
    [
        ["rar3-vols.part1.rar", "rar3-vols.part2.rar", "rar3-vols.part3.rar"],
        ["rar5-vols.part1.rar", "rar5-vols.part2.rar", "rar5-vols.part3.rar"],
        ["rar3-old.rar", "rar3-old.r00", "rar3-old.r01"],
    ],
)
def test_every_rar_volume_says_whether_more_follow(names):
    volumes = [RAR_FIXTURES / name for name in names]

    whole, reads = verdict(volumes)
    so_far, _ = verdict(volumes[:2])

    assert whole.whole is True and whole.rule == f"RAR end of archive: {names[-1]} is the last volume"
    assert [index for index, _, _ in reads] == [2] and sum(length for _, _, length in reads) <= 64
    assert so_far.whole is False and so_far.rule == f"RAR end of archive: {names[1]} says more volumes follow"


def test_bytes_that_are_no_archive_are_opaque_and_wait_by_time(tmp_path):
    for name in ("noise.7z.001", "noise.7z.002", "noise.rar.001", "noise.rar.002", "noise.zip.001", "noise.zip.002"):
        (tmp_path / name).write_bytes(b"\x00" + os.urandom(4999))

    seven, _ = verdict([tmp_path / "noise.7z.001", tmp_path / "noise.7z.002"])
    rar, _ = verdict([tmp_path / "noise.rar.001", tmp_path / "noise.rar.002"])
    zip_, _ = verdict([tmp_path / "noise.zip.001", tmp_path / "noise.zip.002"])

    assert seven.whole is None and rar.whole is None and zip_.whole is None
