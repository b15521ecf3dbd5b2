"""Raw files in an S3-protocol object store (the moto server `make test` starts): kept there, read back and
checked, listed in place by ranged reads, purged there."""

import hashlib
import io
import os
import zipfile
from datetime import timedelta
from pathlib import Path

import py7zr
import pytest
from django.core.files.storage import default_storage
from django.utils import timezone
from storages.backends.s3 import S3Storage

from config.storage import object_store_parse
from packages import archives
from packages.archives import RemoteVolume, listing, read_archive
from packages.archives.entries import Limits
from packages.archives.ranged import RangedReader
from packages.detection import RAR, SEVEN_ZIP, ZIP
from packages.models import MetadataStatus, Package, RawFile
from packages.raw_objects import RawObjectUnreadable, raw_files_listable, raw_files_local, storage_is_local
from packages.services import package_metadata_backfill, raw_file_record, raw_files_purge

pytestmark = pytest.mark.django_db

RAR_FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rar"


@pytest.fixture(autouse=True)
def staging(settings, tmp_path, object_store):
    settings.INGEST_STAGING_DIR = tmp_path / "staging"


def bucket_objects(object_store) -> dict[str, bytes]:
    store = object_store_parse(object_store)
    client = store.client()
    listed = client.list_objects_v2(Bucket=store.bucket).get("Contents", [])
    return {item["Key"]: client.get_object(Bucket=store.bucket, Key=item["Key"])["Body"].read() for item in listed}


def keep(tmp_path, name: str, data: bytes, *, uid: str = "100", days=None) -> RawFile:
    staged = tmp_path / "download" / name
    staged.parent.mkdir(parents=True, exist_ok=True)
    staged.write_bytes(data)
    return raw_file_record(
        file_uid=uid,
        file_name=name,
        size=len(data),
        sha256=hashlib.sha256(data).hexdigest(),
        staged_path=staged,
        chat=None,
        expiration_days=days,
    )


def zip_bytes(entries: dict[str, bytes]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return out.getvalue()


def test_a_kept_raw_file_is_an_object_in_the_bucket_and_the_staged_copy_stays_for_the_upload(object_store, tmp_path):
    assert not storage_is_local()
    raw = keep(tmp_path, "dragon.zip", b"archive bytes")

    digest = hashlib.sha256(b"archive bytes").hexdigest()
    assert raw.object.name == f"raw/{digest[:2]}/{digest}/100/dragon.zip"
    assert bucket_objects(object_store) == {raw.object.name: b"archive bytes"}
    assert (tmp_path / "download" / "dragon.zip").exists()


def test_losing_the_insert_race_keeps_the_winners_object_written_under_the_same_key(
    object_store, tmp_path, monkeypatch
):
    original_save = S3Storage.save

    def save_while_another_worker_records_the_same_document(self, name, content, max_length=None):
        # The other worker downloaded the same document, wrote the same key and committed its row first.
        saved = original_save(self, name, content, max_length=max_length)
        digest = hashlib.sha256(b"archive bytes").hexdigest()
        RawFile.objects.create(file_uid="100", file_name="dragon.zip", size=13, hash=digest, object=saved)
        monkeypatch.setattr(S3Storage, "save", original_save)
        return saved

    monkeypatch.setattr(S3Storage, "save", save_while_another_worker_records_the_same_document)
    raw = keep(tmp_path, "dragon.zip", b"archive bytes")

    assert RawFile.objects.count() == 1
    assert bucket_objects(object_store) == {raw.object.name: b"archive bytes"}, "the winner's object is kept"


def test_purge_deletes_the_object_from_the_bucket_and_keeps_the_row(object_store, tmp_path):
    raw = keep(tmp_path, "dragon.zip", b"archive bytes", days=0)
    kept = keep(tmp_path, "kept.zip", b"other bytes", uid="200")
    RawFile.objects.filter(pk=raw.pk).update(expires_at=timezone.now() - timedelta(minutes=1))

    assert raw_files_purge() == 1

    assert set(bucket_objects(object_store)) == {kept.object.name}
    raw.refresh_from_db()
    assert raw.purged_at is not None and not raw.object


def test_another_worker_reads_a_kept_copy_back_into_its_own_staging_folder(tmp_path, settings):
    data = os.urandom(3 * 1024 * 1024 + 5)
    raw = keep(tmp_path, "big.7z.001", data)
    (tmp_path / "download" / "big.7z.001").unlink()  # the machine that downloaded it is elsewhere

    with raw_files_local([raw], ["big.7z.001"]) as paths:
        assert paths[0].read_bytes() == data
        assert paths[0].parent.parent == settings.INGEST_STAGING_DIR
        assert not paths[0].is_symlink()
    assert list(Path(settings.INGEST_STAGING_DIR).iterdir()) == []


def test_a_kept_copy_that_is_not_the_recorded_bytes_is_refused(object_store, tmp_path):
    raw = keep(tmp_path, "dragon.zip", b"archive bytes")
    store = object_store_parse(object_store)
    store.client().put_object(Bucket=store.bucket, Key=raw.object.name, Body=b"archive bytez")

    with pytest.raises(RawObjectUnreadable, match="not the 13 bytes"), raw_files_local([raw], ["dragon.zip"]):
        pass


def test_a_kept_copy_gone_from_the_bucket_says_so(object_store, tmp_path):
    raw = keep(tmp_path, "dragon.zip", b"archive bytes")
    default_storage.delete(raw.object.name)

    with pytest.raises(RawObjectUnreadable, match="is not in the storage") as caught, raw_files_local([raw], ["x"]):
        pass
    assert caught.value.raw == raw


class CountingReader(RangedReader):
    opened: list["CountingReader"] = []

    def __init__(self, volume):
        super().__init__(volume)
        CountingReader.opened.append(self)


def test_a_large_zip_is_listed_in_place_reading_a_small_part_of_it(tmp_path, monkeypatch):
    payload = os.urandom(16 * 1024 * 1024)  # stored, not compressible: the listing must not read it
    data = zip_bytes({"dragon/body.stl": payload, "dragon/wing.stl": b"w" * 1000, "readme.txt": b"hi"})
    raw = keep(tmp_path, "dragon.zip", data)
    CountingReader.opened = []
    monkeypatch.setattr(listing, "RangedReader", CountingReader)

    with raw_files_listable([raw], ["dragon.zip"], archive_type=ZIP) as volumes:
        assert isinstance(volumes[0], RemoteVolume) and volumes[0].url.startswith("http://127.0.0.1")
        entries = listing.entries_list(ZIP, volumes, Limits(1000, archives.MAX_DECLARED_BYTES))

    assert sorted(entry.path for entry in entries) == ["dragon/body.stl", "dragon/wing.stl", "readme.txt"]
    fetched = sum(reader.fetched for reader in CountingReader.opened)
    assert 0 < fetched <= 1024 * 1024, f"{fetched} bytes read of {len(data)}"


def test_the_listing_child_reads_zip_and_7z_volume_sets_and_a_single_rar_in_place(tmp_path):
    seven = tmp_path / "set.7z"
    with py7zr.SevenZipFile(seven, "w") as archive:
        archive.writestr(os.urandom(300_000), "a.stl")
        archive.writestr(b"tiny", "b/c.stl")
    data = seven.read_bytes()
    volumes = [data[start : start + 100_000] for start in range(0, len(data), 100_000)]
    names = [f"set.7z.{n + 1:03d}" for n in range(len(volumes))]
    raws = [keep(tmp_path, name, volumes[n], uid=str(300 + n)) for n, name in enumerate(names)]
    zipped = keep(tmp_path, "model.zip", zip_bytes({"m.stl": b"x" * 5000}), uid="400")
    rar = keep(tmp_path, "subdirs.rar", (RAR_FIXTURES / "rar3-subdirs.rar").read_bytes(), uid="500")

    with raw_files_listable(raws, names, archive_type=SEVEN_ZIP) as remote:
        assert all(isinstance(volume, RemoteVolume) for volume in remote)
        assert sorted(entry.path for entry in read_archive(SEVEN_ZIP, remote).entries) == ["a.stl", "b/c.stl"]
    with raw_files_listable([zipped], ["model.zip"], archive_type=ZIP) as remote:
        assert [entry.path for entry in read_archive(ZIP, remote).entries] == ["m.stl"]
    with raw_files_listable([rar], ["subdirs.rar"], archive_type=RAR) as remote:
        assert isinstance(remote[0], RemoteVolume)
        local = [RAR_FIXTURES / "rar3-subdirs.rar"]
        assert read_archive(RAR, remote).entries == read_archive(RAR, local).entries


def test_a_multi_volume_rar_is_fetched_to_local_copies_to_be_listed(tmp_path, settings):
    names = ["rar3-vols.part1.rar", "rar3-vols.part2.rar", "rar3-vols.part3.rar"]
    raws = [keep(tmp_path, name, (RAR_FIXTURES / name).read_bytes(), uid=str(600 + n)) for n, name in enumerate(names)]

    with raw_files_listable(raws, names, archive_type=RAR) as volumes:
        assert all(isinstance(volume, Path) for volume in volumes)
        listed = read_archive(RAR, volumes).entries
    assert listed == read_archive(RAR, [RAR_FIXTURES / name for name in names]).entries
    assert list(Path(settings.INGEST_STAGING_DIR).iterdir()) == []


def test_a_stub_is_backfilled_from_the_object_store(tmp_path):
    data = zip_bytes({"dragon/body.stl": os.urandom(50_000), "dragon/base.stl": b"b" * 10})
    raw = keep(tmp_path, "dragon.zip", data)
    package = Package.objects.create(
        content_hash=raw.hash,
        file_name="dragon.zip",
        file_size=len(data),
        archive_type=ZIP,
        volume_names=["dragon.zip"],
    )
    package.raw_files.set([raw])

    package_metadata_backfill(package=package)

    package.refresh_from_db()
    assert package.metadata_status == MetadataStatus.COMPLETE, package.metadata_error
    assert sorted(package.files.values_list("path", flat=True)) == ["dragon/base.stl", "dragon/body.stl"]
