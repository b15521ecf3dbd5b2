"""Repacks recognised: the same files in another wrapper are "likely the same as" the package they copy."""

import random
import zipfile

import py7zr
import pytest
from django.core.management import call_command

from core.models import RunStatus
from packages.models import Package, RepackDecision, SkippedFingerprint
from packages.repacks import ListedFile, listing_fingerprint, overlap_percent
from packages.services import RepackDecisionRefused, package_metadata_fill, package_repack_decide
from tests.support.ingestion import SOURCE, run_cycle, world

pytestmark = pytest.mark.django_db

MODEL = {"body.stl": 40_000, "wings/left.stl": 25_000, "wings/right.stl": 25_000, "base.stl": 9_000}


def content(path: str, size: int) -> bytes:
    return random.Random(path).randbytes(size)


def write_zip(target, files: dict[str, int], *, wrapper: str = "", extra: dict[str, bytes] | None = None):
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, size in files.items():
            archive.writestr(f"{wrapper}{path}", content(path, size))
        for path, data in (extra or {}).items():
            archive.writestr(path, data)
    return target


def write_7z(target, files: dict[str, int], *, wrapper: str = ""):
    with py7zr.SevenZipFile(target, "w") as archive:
        for path, size in files.items():
            archive.writestr(content(path, size), f"{wrapper}{path}")
    return target


def package(name: str, archive_type: str, path) -> Package:
    created = Package.objects.create(
        content_hash=name.encode().hex().ljust(64, "0")[:64], file_name=name, file_size=1, archive_type=archive_type
    )
    return package_metadata_fill(package=created, volume_paths=[path])


def test_the_fingerprint_ignores_the_wrapper_folder_case_and_junk_files():
    files = [ListedFile("body.stl", 10, 1), ListedFile("wings/left.stl", 20, 2)]
    wrapped = [
        ListedFile("Red Dragon (repack)/BODY.stl", 10, 1),
        ListedFile("Red Dragon (repack)\\wings\\left.stl", 20, 2),
        ListedFile("__MACOSX/Red Dragon (repack)/._body.stl", 4, 9),
        ListedFile("Red Dragon (repack)/.DS_Store", 6, 7),
    ]
    assert listing_fingerprint(files) == listing_fingerprint(wrapped) != ""
    assert listing_fingerprint([ListedFile("body.stl", 11, 1), ListedFile("wings/left.stl", 20, 2)]) != (
        listing_fingerprint(files)
    )
    assert listing_fingerprint([]) == ""


def test_overlap_counts_files_by_size_and_crc_whatever_their_names():
    original = [ListedFile(f"part{n}.stl", 100 + n, n) for n in range(10)]
    renamed_plus_readme = [ListedFile(f"p/{n}.stl", 100 + n, n) for n in range(10)] + [ListedFile("readme.txt", 5, 99)]
    assert overlap_percent(original, renamed_plus_readme) == 90
    assert overlap_percent(original, original[:5]) == 50


def test_a_7z_repack_in_another_folder_is_likely_the_same_as_the_zip(tmp_path):
    original = package("red-dragon.zip", "zip", write_zip(tmp_path / "a.zip", MODEL, wrapper="red-dragon/"))
    repack = package("Red Dragon by Someone.7z", "7z", write_7z(tmp_path / "b.7z", MODEL, wrapper="Red Dragon/"))

    assert original.likely_same_as is None
    assert (repack.likely_same_as, repack.likely_same_overlap) == (original, 100)
    assert repack.listing_fingerprint == original.listing_fingerprint


def test_a_repack_with_an_extra_file_is_likely_the_same_with_its_overlap(tmp_path):
    big = {f"tiles/tile-{n:02d}.stl": 5000 + n for n in range(12)}
    original = package("tiles.zip", "zip", write_zip(tmp_path / "a.zip", big))
    repack = package(
        "tiles (fixed).zip", "zip", write_zip(tmp_path / "b.zip", big, extra={"read me.txt": b"posted by me"})
    )

    assert repack.likely_same_as == original
    assert repack.likely_same_overlap == 12 * 100 // 13
    assert repack.listing_fingerprint != original.listing_fingerprint


def test_distinct_packages_sharing_a_readme_are_not_the_same(tmp_path):
    readme = {"readme.txt": b"Thanks for supporting me! " * 40}
    package("dragon.zip", "zip", write_zip(tmp_path / "a.zip", MODEL, extra=readme))
    other = {"tower.stl": 30_000, "door.stl": 8_000}
    tower = package("tower.zip", "zip", write_zip(tmp_path / "b.zip", other, extra=readme))

    assert tower.likely_same_as is None


def test_the_operator_keeps_both_or_skips_future_copies(tmp_path):
    original = package("a.zip", "zip", write_zip(tmp_path / "a.zip", MODEL))
    repack = package("b.7z", "7z", write_7z(tmp_path / "b.7z", MODEL, wrapper="B/"))
    with pytest.raises(RepackDecisionRefused, match="not marked"):
        package_repack_decide(package=original, decision=RepackDecision.KEPT)
    with pytest.raises(RepackDecisionRefused, match="Unknown decision"):
        package_repack_decide(package=repack, decision="delete")

    package_repack_decide(package=repack, decision=RepackDecision.SKIP_COPIES)
    assert list(SkippedFingerprint.objects.values_list("fingerprint", "package")) == [
        (repack.listing_fingerprint, original.pk)
    ]

    package_repack_decide(package=repack, decision=RepackDecision.KEPT)
    repack.refresh_from_db()
    assert repack.repack_decision == RepackDecision.KEPT and not SkippedFingerprint.objects.exists()


def test_a_cycle_marks_a_repack_and_skips_its_copies_once_told(ingest_world, storage, tmp_path):
    original_zip = write_zip(tmp_path / "dragon.zip", MODEL, wrapper="dragon/")
    repack_7z = write_7z(tmp_path / "repack.7z", MODEL, wrapper="Dragon (repack)/")
    ingest_world(
        world(
            messages=[
                {"id": 11, "document": {"name": "dragon.zip", "file": str(original_zip)}},
                {"id": 12, "document": {"name": "Dragon REPACK.7z", "file": str(repack_7z)}},
            ]
        )
    )
    run = run_cycle()
    assert run.status == RunStatus.SUCCESS, run.error
    original, repack = Package.objects.get(file_name="dragon.zip"), Package.objects.get(file_name="Dragon REPACK.7z")
    assert (repack.likely_same_as, repack.likely_same_overlap) == (original, 100)

    package_repack_decide(package=repack, decision=RepackDecision.SKIP_COPIES)
    copy = write_zip(tmp_path / "copy.zip", MODEL, wrapper="Dragon again/")
    call_command("sandbox_post", str(SOURCE), "--file", str(copy), "--name", "dragon-final.zip")
    run = run_cycle()

    assert run.status == RunStatus.SUCCESS, run.error
    assert (run.ingested, run.duplicates) == (0, 1)
    assert Package.objects.count() == 2
    original.refresh_from_db()
    assert len(original.telegram_document_ids) == 2  # the copy's document dedupes for free next time
