import io
import shutil
import zipfile
from pathlib import Path

import py7zr
import pytest

from packages.archives import ListingError, PasswordProtected, read_archive
from packages.detection import MODEL, RAR, SEVEN_ZIP, ZIP

RAR_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rar"


def make_zip(path: Path, entries: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return path


def split_bytes(source: Path, volume_size: int) -> list[Path]:
    data = source.read_bytes()
    volumes = []
    for number, start in enumerate(range(0, len(data), volume_size), start=1):
        volume = source.with_name(f"{source.name}.{number:03d}")
        volume.write_bytes(data[start : start + volume_size])
        volumes.append(volume)
    source.unlink()
    return volumes


def test_zip_listing_has_sizes_and_crc(tmp_path):
    path = make_zip(tmp_path / "dragon.zip", {"dragon/body.stl": b"x" * 2000, "dragon/": b""})
    entries = read_archive(ZIP, [path]).entries
    assert [(entry.path, entry.size) for entry in entries] == [("dragon/body.stl", 2000)]
    assert entries[0].crc32 == zipfile.ZipFile(path).getinfo("dragon/body.stl").CRC


def test_numbered_zip_volumes_list_as_one_archive(tmp_path):
    path = make_zip(tmp_path / "big.zip", {f"part{n}.stl": bytes([n]) * 30000 for n in range(5)})
    volumes = split_bytes(path, 40000)
    assert len(volumes) > 1
    assert len(read_archive(ZIP, volumes).entries) == 5


def test_7z_single_and_volumes(tmp_path):
    path = tmp_path / "big.7z"
    with py7zr.SevenZipFile(path, "w") as archive:
        archive.writestr(b"a" * 100_000, "a.stl")
        archive.writestr(b"b" * 10, "docs/readme.txt")
    assert sorted(entry.path for entry in read_archive(SEVEN_ZIP, [path]).entries) == ["a.stl", "docs/readme.txt"]
    copy = tmp_path / "copy" / "big.7z"
    copy.parent.mkdir()
    shutil.copy(path, copy)
    volumes = split_bytes(copy, 300)
    assert sorted(entry.path for entry in read_archive(SEVEN_ZIP, volumes).entries) == ["a.stl", "docs/readme.txt"]


def test_7z_with_encrypted_headers_needs_a_password(tmp_path):
    path = tmp_path / "secret.7z"
    with py7zr.SevenZipFile(path, "w", password="hunter2", header_encryption=True) as archive:
        archive.writestr(b"data", "inside.stl")
    with pytest.raises(PasswordProtected):
        read_archive(SEVEN_ZIP, [path])


VOLS = [("vols/bigfile.txt", 205000), ("vols/smallfile.txt", 2050)]
SUBDIRS = [
    ("sub/dir1/file1.txt", 6),
    ("sub/dir2/file2.txt", 6),
    ("sub/with space/long fn.txt", 8),
    ("sub/üȵĩöḋè/file.txt", 5),
]


@pytest.mark.parametrize(
    ("volumes", "expected"),
    [
        (["rar3-vols.part1.rar", "rar3-vols.part2.rar", "rar3-vols.part3.rar"], VOLS),
        (["rar5-vols.part1.rar", "rar5-vols.part2.rar", "rar5-vols.part3.rar"], VOLS),
        (["rar3-old.rar", "rar3-old.r00", "rar3-old.r01"], VOLS),
        (["rar3-subdirs.rar"], SUBDIRS),
        (["rar5-subdirs.rar"], SUBDIRS),
        (["rar5-solid.rar"], [("stest1.txt", 2048), ("stest2.txt", 2048)]),
        (["unicode.rar"], [("уииоотивл.txt", 2), ("𝐀𝐁𝐁𝐂.txt", 2)]),
    ],
)
def test_rar_listing_from_the_first_volume(volumes, expected):
    """Files only (folders are not entries), each with its full path and uncompressed size."""
    entries = read_archive(RAR, [RAR_FIXTURES / name for name in volumes]).entries
    assert sorted((entry.path, entry.size) for entry in entries) == expected


def test_rar_with_encrypted_headers_needs_a_password():
    with pytest.raises(PasswordProtected):
        read_archive(RAR, [RAR_FIXTURES / "rar5-hpsw.rar"])


def test_a_zip_that_is_not_a_zip_is_a_listing_error(tmp_path):
    path = tmp_path / "fake.zip"
    path.write_bytes(b"this is not an archive" * 100)
    with pytest.raises(ListingError) as caught:
        read_archive(ZIP, [path])
    assert not caught.value.needs_password


def test_truncated_7z_is_a_listing_error(tmp_path):
    path = tmp_path / "cut.7z"
    buffer = io.BytesIO()
    with py7zr.SevenZipFile(buffer, "w") as archive:
        archive.writestr(b"z" * 5000, "a.stl")
    path.write_bytes(buffer.getvalue()[:-40])
    with pytest.raises(ListingError):
        read_archive(SEVEN_ZIP, [path])


def test_a_model_document_lists_itself(tmp_path):
    path = tmp_path / "bust.stl"
    path.write_bytes(b"solid bust\n")
    (entry,) = read_archive(MODEL, [path]).entries
    assert (entry.path, entry.size) == ("bust.stl", 11)
