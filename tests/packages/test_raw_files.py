from datetime import timedelta

import pytest
from django.core.files.storage import FileSystemStorage, default_storage
from django.db import IntegrityError, transaction
from django.utils import timezone

from ingestion.models import Channel
from packages.models import RawFile
from packages.services import (
    RetentionMisconfigured,
    raw_file_expiry,
    raw_file_record,
    raw_files_purge,
)
from tests.support import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


def staged(tmp_path, name="dragon.zip", data=b"archive bytes"):
    path = tmp_path / "staging" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def record(tmp_path, *, uid="100", name="dragon.zip", sha="a" * 64, days=None, chat=None):
    return raw_file_record(
        file_uid=uid,
        file_name=name,
        size=13,
        sha256=sha,
        staged_path=staged(tmp_path, name),
        chat=chat,
        expiration_days=days,
    )


def test_the_staged_file_is_moved_into_storage(tmp_path):
    raw = record(tmp_path)
    assert default_storage.open(raw.object.name).read() == b"archive bytes"
    assert not (tmp_path / "staging" / "dragon.zip").exists()


def test_recording_the_same_file_twice_is_idempotent(tmp_path):
    first = record(tmp_path)
    second = record(tmp_path)
    assert first.pk == second.pk
    assert RawFile.objects.count() == 1


def test_same_content_from_another_file_reuses_the_unprocessed_object(tmp_path):
    first = record(tmp_path, uid="100")
    again = record(tmp_path, uid="200", name="copy.zip")
    assert again.pk == first.pk
    assert not (tmp_path / "staging" / "copy.zip").exists(), "the duplicate's new object is deleted"


def test_an_expired_duplicate_gets_three_more_hours(tmp_path):
    first = record(tmp_path, uid="100", days=0)
    RawFile.objects.filter(pk=first.pk).update(expires_at=timezone.now() - timedelta(hours=1))
    again = record(tmp_path, uid="200", name="copy.zip")
    assert again.expires_at > timezone.now() + timedelta(hours=2, minutes=59)


def test_a_processed_file_does_not_absorb_new_downloads(tmp_path):
    first = record(tmp_path, uid="100")
    RawFile.objects.filter(pk=first.pk).update(processed_at=timezone.now())
    again = record(tmp_path, uid="200", name="copy.zip")
    assert again.pk != first.pk


@pytest.mark.parametrize(
    ("days", "expected"),
    [(None, None), (0, timedelta(hours=3)), (7, timedelta(days=7))],
)
def test_retention_from_the_channel(days, expected):
    expires_at = raw_file_expiry(expiration_days=days)
    if expected is None:
        assert expires_at is None
    else:
        assert abs((expires_at - timezone.now()) - expected) < timedelta(seconds=5)


def test_a_retention_stored_before_the_bound_expires_within_a_century_not_an_overflow():
    expires_at = raw_file_expiry(expiration_days=9_999_999)
    assert abs((expires_at - timezone.now()) - timedelta(days=36_500)) < timedelta(seconds=5)


def test_the_database_refuses_a_retention_out_of_range():
    channel = factories.channel()
    with pytest.raises(IntegrityError), transaction.atomic():
        Channel.objects.filter(pk=channel.pk).update(expiration_days=36_501)


def test_negative_retention_is_a_configuration_error():
    with pytest.raises(RetentionMisconfigured, match="expiration_days is -1"):
        raw_file_expiry(expiration_days=-1)


def test_losing_the_insert_race_re_reads_the_winner(tmp_path, monkeypatch):
    channel = factories.channel()
    original_save = FileSystemStorage.save

    def save_while_another_worker_inserts(self, name, content, max_length=None):
        # The other worker commits its row between our lookups and our insert.
        RawFile.objects.create(file_uid="100", file_name="dragon.zip", size=13, hash="a" * 64, object="other")
        monkeypatch.setattr(FileSystemStorage, "save", original_save)
        return original_save(self, name, content, max_length=max_length)

    monkeypatch.setattr(FileSystemStorage, "save", save_while_another_worker_inserts)
    raw = record(tmp_path, chat=channel.chat)
    assert raw.object.name == "other"
    assert RawFile.objects.count() == 1


def test_purge_deletes_expired_objects_and_keeps_the_rows(tmp_path):
    raw = record(tmp_path, days=0)
    kept = record(tmp_path, uid="300", name="kept.zip", sha="b" * 64, days=None)
    RawFile.objects.filter(pk=raw.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    name = raw.object.name

    assert raw_files_purge() == 1

    raw.refresh_from_db()
    assert raw.purged_at is not None and not raw.object
    assert not default_storage.exists(name)
    assert default_storage.exists(kept.object.name)


def test_a_purged_file_is_never_reused_the_new_download_becomes_its_object(tmp_path):
    raw = record(tmp_path, days=0)
    RawFile.objects.filter(pk=raw.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    raw_files_purge()

    again = record(tmp_path, days=0)

    assert again.pk == raw.pk, "one row per Telegram document, with its history"
    assert again.purged_at is None and again.expires_at > timezone.now()
    assert default_storage.open(again.object.name).read() == b"archive bytes"
    assert not (tmp_path / "staging" / "dragon.zip").exists()


def test_a_purged_duplicate_by_content_is_stored_again(tmp_path):
    raw = record(tmp_path, days=0)
    RawFile.objects.filter(pk=raw.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    raw_files_purge()

    other = record(tmp_path, uid="200", name="copy.zip", days=0)

    assert other.pk == raw.pk and other.purged_at is None
    assert default_storage.open(other.object.name).read() == b"archive bytes"
