"""A kit of two files (a small model, noise that does not compress) packed by a real tool, kept as a package's
raw file and listed as ingestion lists it: for reading one file out of an archive."""

import os

import trimesh
from django.core.files.storage import default_storage

from packages.services import package_metadata_fill
from tests.support.archives import run
from tests.support.factories import package_with_raw_files

MODEL = trimesh.creation.icosphere(subdivisions=4).export(file_type="stl")
NOISE = os.urandom(300_000)


def listed_package(tmp_path, name: str, data: bytes, archive_type: str):
    package = package_with_raw_files(tmp_path, {name: data})
    package.archive_type = archive_type
    package.save(update_fields=["archive_type"])
    named = tmp_path / "listed" / name  # the kept object, under the name the readers go by
    named.parent.mkdir(parents=True, exist_ok=True)
    named.symlink_to(default_storage.path(package.raw_files.get().object.name))
    package_metadata_fill(package=package, volume_paths=[named])
    assert package.metadata_status == "complete", package.metadata_error
    return package


def packed(tmp_path, archive: str, *command: str) -> bytes:
    folder = tmp_path / "in"
    (folder / "kit").mkdir(parents=True)
    (folder / "kit" / "ball.stl").write_bytes(MODEL)
    (folder / "kit" / "noise.bin").write_bytes(NOISE)
    run(*command, str(tmp_path / archive), "kit", cwd=folder)
    return (tmp_path / archive).read_bytes()
