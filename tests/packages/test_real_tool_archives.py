"""Archives made at test time by the tools people use (Debian's Info-ZIP `zip` and `7z`), and real RAR files:
split sets, encryption, zip64, Unicode names, solid 7z, empty archives. Listed in the child process as the
pipeline lists them, then recorded on a package as package_metadata_fill records them.
"""

import os
import subprocess
import zipfile
from pathlib import Path

import pytest
from django.urls import reverse

from packages.archives import PasswordProtected, read_archive
from packages.archives.streams import JoinedVolumes
from packages.detection import RAR, SEVEN_ZIP, ZIP
from packages.models import MetadataStatus, Package
from packages.services import package_metadata_fill
from tests.support.archives import PASSWORD, files, run, tool

RAR_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rar"
UNICODE_NAMES = ["драконы/тело.stl", "ドラゴン/翼.stl", "café/crème brûlée.obj"]


@pytest.fixture
def workdir(tmp_path) -> Path:
    (tmp_path / "in").mkdir()
    return tmp_path


def listed(archive_type: str, volumes: list[Path]) -> dict[str, bool]:
    """path → encrypted"""
    return {entry.path: entry.encrypted for entry in read_archive(archive_type, volumes).entries}


# Info-ZIP split sets ---------------------------------------------------------------------------------------------


def test_a_split_set_whose_central_directory_spans_volumes_lists_completely(workdir):
    names = files(workdir / "in", [f"models/part-{n:04d}-{'x' * 60}.stl" for n in range(2500)], size=40)
    run(tool("zip"), "-q", "-r", "-s", "64k", str(workdir / "big.zip"), "models", cwd=workdir / "in")
    volumes = sorted(workdir.glob("big.z*"))
    assert [volume.name for volume in volumes][-1] == "big.zip" and len(volumes) > 3
    with JoinedVolumes(sorted(volumes[:-1]) + [volumes[-1]]) as joined:
        end = zipfile._EndRecData(joined)
    assert end[zipfile._ECD_DISK_START] < end[zipfile._ECD_DISK_NUMBER], "the central directory starts a volume early"
    with pytest.raises(zipfile.BadZipFile):
        zipfile.ZipFile(volumes[-1]).infolist()  # the .zip alone: "Bad offset for central directory"

    # In any order the pipeline hands them over.
    for order in (volumes, list(reversed(volumes))):
        assert sorted(listed(ZIP, order)) == sorted(names)


def test_a_small_split_set_and_its_unicode_names(workdir):
    names = files(workdir / "in", [*UNICODE_NAMES, "big.bin"], size=150_000)
    run(tool("zip"), "-q", "-s", "100k", str(workdir / "set.zip"), *names, cwd=workdir / "in")

    assert sorted(listed(ZIP, sorted(workdir.glob("set.z*")))) == sorted(names)


# Encryption --------------------------------------------------------------------------------------------------------


def test_zip_aes_made_by_7z_is_flagged_per_entry(workdir):
    names = files(workdir / "in", ["a.stl", "b/c.stl"])
    run(tool("7z"), "a", "-tzip", "-mem=AES256", f"-p{PASSWORD}", str(workdir / "aes.zip"), *names, cwd=workdir / "in")

    assert listed(ZIP, [workdir / "aes.zip"]) == {"a.stl": True, "b/c.stl": True}


def test_zipcrypto_mixed_with_plain_entries(workdir):
    files(workdir / "in", ["plain.stl", "secret.stl"])
    run(tool("zip"), "-q", str(workdir / "mixed.zip"), "plain.stl", cwd=workdir / "in")
    run(tool("zip"), "-q", "-e", "-P", PASSWORD, str(workdir / "mixed.zip"), "secret.stl", cwd=workdir / "in")

    assert listed(ZIP, [workdir / "mixed.zip"]) == {"plain.stl": False, "secret.stl": True}


def test_7z_with_a_password_is_flagged_and_with_encrypted_headers_needs_one_to_list(workdir):
    names = files(workdir / "in", ["a.stl", "b.stl"])
    run(tool("7z"), "a", f"-p{PASSWORD}", str(workdir / "data.7z"), *names, cwd=workdir / "in")
    run(tool("7z"), "a", f"-p{PASSWORD}", "-mhe=on", str(workdir / "headers.7z"), *names, cwd=workdir / "in")

    assert listed(SEVEN_ZIP, [workdir / "data.7z"]) == {"a.stl": True, "b.stl": True}
    with pytest.raises(PasswordProtected, match="encrypted headers"):
        read_archive(SEVEN_ZIP, [workdir / "headers.7z"])


def test_rar_fixtures_flag_encrypted_entries():
    assert set(listed(RAR, [RAR_FIXTURES / "rar5-psw.rar"]).values()) == {True}
    assert set(listed(RAR, [RAR_FIXTURES / "rar5-solid.rar"]).values()) == {False}
    volumes = [RAR_FIXTURES / f"rar3-vols.part{n}.rar" for n in (1, 2, 3)]
    assert listed(RAR, volumes) and not any(listed(RAR, volumes).values())


# zip64, solid 7z, empty archives ---------------------------------------------------------------------------------


def test_zip64_made_by_zip_fz(workdir):
    names = files(workdir / "in", ["a.stl", *UNICODE_NAMES])
    run(tool("zip"), "-q", "-fz", str(workdir / "z64.zip"), *names, cwd=workdir / "in")
    assert zipfile.ZipFile(workdir / "z64.zip").infolist()[0].extract_version >= zipfile.ZIP64_VERSION

    assert sorted(listed(ZIP, [workdir / "z64.zip"])) == sorted(names)


def test_solid_7z_with_unicode_names_and_its_volumes(workdir):
    names = files(workdir / "in", [*UNICODE_NAMES, "z.bin"], size=120_000)
    run(tool("7z"), "a", "-ms=on", str(workdir / "solid.7z"), *names, cwd=workdir / "in")
    run(tool("7z"), "a", "-ms=on", "-v100k", str(workdir / "vols" / "solid.7z"), *names, cwd=workdir / "in")

    assert sorted(listed(SEVEN_ZIP, [workdir / "solid.7z"])) == sorted(names)
    volumes = sorted((workdir / "vols").glob("solid.7z.*"))
    assert len(volumes) > 1 and sorted(listed(SEVEN_ZIP, volumes)) == sorted(names)


def test_empty_archives_list_as_empty(workdir):
    files(workdir / "in", ["only.stl"])
    (workdir / "in" / "empty-folder").mkdir()
    run(tool("zip"), "-q", str(workdir / "empty.zip"), "only.stl", cwd=workdir / "in")
    subprocess.run([tool("zip"), "-q", "-d", str(workdir / "empty.zip"), "only.stl"], cwd=workdir, capture_output=True)
    run(tool("7z"), "a", str(workdir / "empty.7z"), "empty-folder", cwd=workdir / "in")

    assert read_archive(ZIP, [workdir / "empty.zip"]).entries == []
    assert read_archive(SEVEN_ZIP, [workdir / "empty.7z"]).entries == []


# On the package, and on its page ---------------------------------------------------------------------------------


def package_for(path: Path, archive_type: str) -> Package:
    return Package.objects.create(
        content_hash=os.urandom(32).hex(), file_name=path.name, file_size=path.stat().st_size, archive_type=archive_type
    )


@pytest.mark.django_db
def test_a_package_whose_every_file_is_encrypted_needs_a_password(workdir, admin_client):
    names = files(workdir / "in", ["a.stl", "b.stl"])
    run(tool("zip"), "-q", "-e", "-P", PASSWORD, str(workdir / "locked.zip"), *names, cwd=workdir / "in")
    package = package_for(workdir / "locked.zip", ZIP)

    package = package_metadata_fill(package=package, volume_paths=[workdir / "locked.zip"])

    assert (package.metadata_status, package.file_count, package.encrypted_files) == (MetadataStatus.COMPLETE, 2, 2)
    assert package.needs_password and "Every file is encrypted" in package.metadata_error
    assert list(package.files.values_list("encrypted", flat=True)) == [True, True]
    page = admin_client.get(reverse("packages:detail", args=[package.pk])).content.decode()
    assert "🔒 Needs password" in page and 'aria-label="encrypted"' in page
    listing = admin_client.get(reverse("packages:list"), {"locked": "1"}).content.decode()
    assert "locked.zip" in listing and 'name="locked" value="1" checked' in listing
    skipped = admin_client.get(reverse("ingestion:skipped")).content.decode()
    assert "Password-protected archives are not skipped" in skipped
    api = admin_client.get(f"/api/packages/{package.pk}/").json()
    assert (api["needs_password"], api["encrypted_files"], api["files"][0]["encrypted"]) == (True, 2, True)


@pytest.mark.django_db
def test_a_package_with_some_encrypted_files_says_how_many(workdir):
    files(workdir / "in", ["plain.stl", "secret.stl"])
    run(tool("zip"), "-q", str(workdir / "mixed.zip"), "plain.stl", cwd=workdir / "in")
    run(tool("zip"), "-q", "-e", "-P", PASSWORD, str(workdir / "mixed.zip"), "secret.stl", cwd=workdir / "in")

    mixed = workdir / "mixed.zip"
    package = package_metadata_fill(package=package_for(mixed, ZIP), volume_paths=[mixed])

    assert (package.encrypted_files, package.needs_password) == (1, False)
    assert "1 of 2 files are encrypted" in package.metadata_error


@pytest.mark.django_db
def test_a_package_with_encrypted_headers_needs_a_password_and_has_no_listing(workdir, admin_client):
    files(workdir / "in", ["a.stl"])
    run(tool("7z"), "a", f"-p{PASSWORD}", "-mhe=on", str(workdir / "h.7z"), "a.stl", cwd=workdir / "in")

    package = package_metadata_fill(package=package_for(workdir / "h.7z", SEVEN_ZIP), volume_paths=[workdir / "h.7z"])

    assert (package.metadata_status, package.needs_password) == (MetadataStatus.UNAVAILABLE, True)
    page = admin_client.get(reverse("packages:detail", args=[package.pk])).content.decode()
    assert "🔒 Needs password" in page and "encrypted headers" in page


@pytest.mark.large
@pytest.mark.django_db
def test_a_split_set_through_the_package_listing(workdir):
    names = files(workdir / "in", [f"set/{n:03d}-{'y' * 50}.stl" for n in range(1500)], size=30)
    run(tool("zip"), "-q", "-r", "-s", "64k", str(workdir / "kit.zip"), "set", cwd=workdir / "in")
    volumes = sorted(workdir.glob("kit.z*"))
    package = package_for(volumes[-1], ZIP)

    package = package_metadata_fill(package=package, volume_paths=volumes)

    assert (package.metadata_status, package.file_count) == (MetadataStatus.COMPLETE, len(names))
