"""Reminder media: the type is judged by the bytes, the size by Telegram's limits per kind, and media no
reminder uses is deleted after a day."""

import struct
import zlib
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from core import clock
from core.models import RunStatus
from reminders.models import MediaFile
from reminders.services import PartSpec, media_create, media_purge_unused, reminder_fire
from tests.support.pages import HTMX, body, compose
from tests.support.reminders import (
    KL,
    KL_AFTER_CLOSE,
    KL_MORNING,
    execute,
    groups_world,
    make_reminder,
    png_bytes,
)

pytestmark = pytest.mark.django_db
MB = 1024 * 1024


@pytest.fixture
def api(admin_user):
    client = APIClient()
    client.force_authenticate(admin_user)
    return client


def upload(api, content: bytes, name: str, content_type: str = "image/png"):
    return api.post("/api/media/", {"file": SimpleUploadedFile(name, content, content_type)}, format="multipart")


def huge_png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")


@pytest.mark.parametrize(
    ("content", "name", "message"),
    [
        (b"just some words, not a picture", "promo.png", "promo.png is named .png, but its bytes are not a picture."),
        (b"MZ\x90\x00" + b"\x00" * 200, "setup.exe", "setup.exe is a Windows program"),
        (b"\x7fELF\x02\x01" + b"\x00" * 100, "tool", "is a Linux program"),
        (b"#!/bin/sh\nrm -rf /\n", "run.txt", "is a script"),
        (b"\x00" * (50 * MB), "big.jpg", "big.jpg is named .jpg, but its bytes are not a picture"),
        (b"\x00\x01\x02\x03" * 100, "data.bin", "data.bin is not a type Stashcast sends"),
        (
            png_bytes(1) + b"\x00" * (11 * MB),
            "poster.png",
            "The picture is 11.5 MB; Telegram takes photos up to 10.5 MB",
        ),
        (huge_png(20000, 20000), "huge.png", "far more pixels"),
        (huge_png(9000, 2000), "banner.png", "9000×2000 pixels"),
        (b"", "empty.png", "empty"),
    ],
)
def test_uploads_are_judged_by_their_bytes(api, content, name, message):
    response = upload(api, content, name)

    assert response.status_code == 400, response.content
    assert response.json()["message"].startswith("file:") and message in response.json()["message"], response.json()
    assert not MediaFile.objects.exists()


@pytest.mark.parametrize(
    ("content", "name", "kind", "mime_type"),
    [
        (png_bytes(2), "photo.bin", "photo", "image/png"),
        (b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 100, "clip.mp4", "video", "video/mp4"),
        (b"\x00\x00\x00\x14ftypqt  " + b"\x00" * 100, "clip.mov", "video", "video/quicktime"),
        (b"%PDF-1.7\n" + b"x" * 100, "price-list.pdf", "document", "application/pdf"),
        (b"PK\x03\x04" + b"\x00" * 100, "models.zip", "document", "application/zip"),
        ("Prices this week: 10 €\n".encode(), "prices.txt", "document", "text/plain"),
    ],
)
def test_accepted_types_get_their_kind_from_their_bytes(api, content, name, kind, mime_type):
    response = upload(api, content, name, content_type="application/x-whatever")

    assert response.status_code == 201, response.content
    media = MediaFile.objects.get(pk=response.json()["id"])
    assert (media.kind, media.mime_type, response.json()["mime_type"]) == (kind, mime_type, mime_type)


def test_a_file_above_the_accounts_upload_limit_is_refused_in_the_reminder(api, fanout_world):
    fanout_world(groups_world(groups=2))
    media = media_create(file=ContentFile(b"%PDF-1.7\n", name="catalogue.pdf"), name="catalogue.pdf")
    MediaFile.objects.filter(pk=media.pk).update(size=3 * 1024**3)  # as a 3 GB upload would be stored

    response = api.post("/api/reminders/", body(parts=[{"media": media.pk, "caption": "The catalogue"}]), format="json")

    assert response.status_code == 400
    assert "the file is 3.2 GB and this account sends at most 2.1 GB" in response.json()["message"]


def test_the_form_says_what_it_takes_and_names_a_fake_picture_on_its_row(operator, fanout_world):
    fanout_world(groups_world(groups=2))
    url = reverse("reminders:compose")
    page = operator.get(url).content.decode()
    data = compose(part=["0"], **{"part-0-kind": "media", "part-0-caption": "This week"}, action="upload")
    data["part-0-file"] = SimpleUploadedFile("promo.png", b"<html>not a picture</html>", "image/png")

    html = operator.post(url, data, **HTMX).content.decode()

    assert "Choose a picture or file" not in page, "a text part first"
    assert "up to 10 MB are sent as photos" in html and "4 GB from a Premium account" in html
    assert "promo.png is named .png, but its bytes are not a picture." in html
    assert 'name="part-0-caption"' in html and "This week" in html
    assert not MediaFile.objects.exists()


def test_media_no_reminder_uses_is_deleted_after_a_day(fanout_world, at):
    fanout_world(groups_world(groups=6))
    at(KL_MORNING)
    kept_by_reminder = media_create(file=ContentFile(png_bytes(1), name="a.png"), name="a.png")
    kept_by_run = media_create(file=ContentFile(png_bytes(2), name="b.png"), name="b.png")
    abandoned = media_create(file=ContentFile(png_bytes(3), name="c.png"), name="c.png")
    make_reminder(timezone=KL, start=9, end=18, name="Kept", parts=[PartSpec(media=kept_by_reminder)])
    paused = make_reminder(timezone=KL, start=9, end=18, name="Edited", parts=[PartSpec(media=kept_by_run)])
    run = reminder_fire(reminder=paused)
    at(KL_MORNING, then=KL_AFTER_CLOSE, after=3)
    assert execute(run).status == RunStatus.PAUSED
    paused.parts.all().delete()  # edited since: only the paused run still needs its media
    MediaFile.objects.update(created_at=KL_MORNING)
    abandoned_path = Path(abandoned.file.path)

    at(KL_MORNING + timedelta(hours=23))
    assert media_purge_unused() == 0
    at(KL_MORNING + timedelta(hours=25))
    young = media_create(file=ContentFile(png_bytes(4), name="d.png"), name="d.png")
    MediaFile.objects.filter(pk=young.pk).update(created_at=clock.now())

    assert media_purge_unused(now=clock.now()) == 1
    assert set(MediaFile.objects.values_list("pk", flat=True)) == {kept_by_reminder.pk, kept_by_run.pk, young.pk}
    assert not abandoned_path.exists()


def test_media_in_an_album_is_kept_while_a_reminder_or_an_open_run_has_it(fanout_world, at):
    fanout_world(groups_world(groups=6))
    at(KL_MORNING)
    in_reminder = [media_create(file=ContentFile(png_bytes(n), name=f"r{n}.png"), name=f"r{n}.png") for n in (11, 12)]
    in_run = [media_create(file=ContentFile(png_bytes(n), name=f"p{n}.png"), name=f"p{n}.png") for n in (13, 14)]
    make_reminder(timezone=KL, start=9, end=18, name="Kept", parts=[PartSpec(album=in_reminder)])
    paused = make_reminder(timezone=KL, start=9, end=18, name="Edited", parts=[PartSpec(album=in_run)])
    run = reminder_fire(reminder=paused)
    at(KL_MORNING, then=KL_AFTER_CLOSE, after=3)
    assert execute(run).status == RunStatus.PAUSED
    paused.parts.all().delete()  # edited since: only the paused run still needs its album
    MediaFile.objects.update(created_at=KL_MORNING)

    at(KL_MORNING + timedelta(hours=25))
    assert media_purge_unused(now=clock.now()) == 0
    assert MediaFile.objects.count() == 4


def test_the_same_picture_stored_twice_at_once_in_an_object_store_keeps_one_object(object_store, monkeypatch):
    import hashlib

    from storages.backends.s3 import S3Storage

    from config.storage import object_store_parse

    data = png_bytes(7)
    original_save = S3Storage.save

    def save_while_another_upload_of_the_same_bytes_commits(self, name, content, max_length=None):
        # Both uploads checked the name at once, so both wrote the same key; the other committed its row first.
        saved = original_save(self, name, content, max_length=max_length)
        MediaFile.objects.create(
            file=saved, name="promo.png", size=len(data), mime_type="image/png", sha256=hashlib.sha256(data).hexdigest()
        )
        monkeypatch.setattr(S3Storage, "save", original_save)
        return saved

    monkeypatch.setattr(S3Storage, "save", save_while_another_upload_of_the_same_bytes_commits)
    media = media_create(file=ContentFile(data, name="promo.png"), name="promo.png")

    store = object_store_parse(object_store)
    kept = store.client().get_object(Bucket=store.bucket, Key=media.file.name)["Body"].read()
    assert kept == data and MediaFile.objects.count() == 1
