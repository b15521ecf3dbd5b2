"""Sets that say when they are whole: real split sets (Debian's 7z, the RAR fixtures) posted just now are taken
as soon as their bytes say they are whole, and a set whose bytes say it is not waits, saying which rule decided.
Each is posted just now: by time alone it would wait INGEST_SET_SETTLE_SECONDS, and a 7z split whose last
volume is as big as its first (as here) INGEST_SET_OPEN_MAX_SECONDS."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings

from ingestion.models import SkippedPackage, SkipReason
from packages.models import Package
from telegram.sandbox.world import World
from tests.support.ingestion import SOURCE, run_cycle, world

pytestmark = pytest.mark.django_db

RAR_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rar"


@pytest.fixture(autouse=True)
def sets_wait_long(settings, tmp_path):
    settings.INGEST_STAGING_DIR = tmp_path / "staging"
    settings.INGEST_SET_SETTLE_SECONDS = 120
    settings.INGEST_SET_OPEN_MAX_SECONDS = 6 * 3600


def split_set(folder: Path, *, volumes: int, kind: str = "7z") -> list[Path]:
    """A real archive made by Debian's 7z (stored: `7z` or `zip` format) cut into `volumes` byte-volumes of one
    size, as `7z -v` cuts: `set.7z.001`… or `set.zip.001`…"""
    seven = shutil.which("7z") or pytest.fail("`7z` is needed: apt-get install p7zip-full (as .ci/run does)")
    source = folder / "src"
    source.mkdir()
    archive = folder / f"set.{kind}"
    for extra in range(volumes):
        (source / "body.stl").write_bytes(os.urandom(300_000 + extra))
        archive.unlink(missing_ok=True)
        command = [seven, "a", f"-t{kind}", "-mx0", str(archive), "body.stl"]
        subprocess.run(command, cwd=source, check=True, capture_output=True)
        data = archive.read_bytes()
        if len(data) % volumes == 0:
            break
    size = len(data) // volumes
    paths = []
    for index in range(volumes):
        path = folder / f"set.{kind}.{index + 1:03d}"
        path.write_bytes(data[index * size : (index + 1) * size])
        paths.append(path)
    return paths


def post_now(paths: list[Path]) -> None:
    """Post each file as a new message of the source channel, dated now (not the world file's 2024)."""
    sandbox = World(settings.SANDBOX_PATH)
    for path in paths:
        sandbox.message_post(SOURCE, document={"name": path.name, "file": str(path)})


@pytest.mark.parametrize("kind", ["7z", "zip"])
def test_a_split_set_posted_just_now_is_taken_at_once(ingest_world, tmp_path, kind):
    ingest_world(world(messages=[]))
    volumes = split_set(tmp_path, volumes=3, kind=kind)
    post_now(volumes)

    run = run_cycle()

    assert run.ingested == 1, (run.error, list(SkippedPackage.objects.values_list("error_message", flat=True)))
    package = Package.objects.get()
    assert package.file_name == f"set.{kind}.001" and package.part_count == 3
    rule = "7z start header: the archive is" if kind == "7z" else "zip end of central directory: the archive ends"
    assert package.whole_by.startswith(rule), package.whole_by
    assert list(package.files.values_list("path", flat=True)) == ["body.stl"]


def test_a_7z_split_still_open_waits_saying_why_and_is_taken_when_its_volume_comes(ingest_world, tmp_path):
    ingest_world(world(messages=[]))
    volumes = split_set(tmp_path, volumes=3)
    post_now(volumes[:2])

    first = run_cycle()

    waiting = SkippedPackage.objects.get()
    assert (first.ingested, waiting.reason) == (0, SkipReason.WAITING_FOR_VOLUMES)
    assert "7z start header: the archive is " in waiting.error_message
    assert "is posted so far" in waiting.error_message

    post_now(volumes[2:])
    second = run_cycle()

    assert second.ingested == 1, second.error
    assert not SkippedPackage.objects.exists()


@pytest.mark.parametrize("prefix", ["rar3-vols", "rar5-vols"])
def test_a_rar_set_whose_last_volume_says_so_is_taken_at_once(ingest_world, prefix):
    ingest_world(world(messages=[]))
    post_now([RAR_FIXTURES / f"{prefix}.part{number}.rar" for number in (1, 2, 3)])

    run = run_cycle()

    assert run.ingested == 1, (run.error, list(SkippedPackage.objects.values_list("error_message", flat=True)))
    package = Package.objects.get()
    assert package.part_count == 3
    assert package.whole_by == f"RAR end of archive: {package.volume_names[-1]} is the last volume"


def test_a_rar_set_whose_last_volume_says_more_follow_waits(ingest_world):
    ingest_world(world(messages=[]))
    post_now([RAR_FIXTURES / f"rar5-vols.part{number}.rar" for number in (1, 2)])

    run_cycle()

    message = SkippedPackage.objects.get().error_message
    assert "RAR end of archive: rar5-vols.part2.rar says more volumes follow" in message
