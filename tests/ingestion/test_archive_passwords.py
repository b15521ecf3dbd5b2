"""Passwords at ingestion: an archive that needs one is listed with the password its caption names, or one the
operator keeps for its channel (sealed, added on the channel page or through the API, never shown to viewers);
the package says which one opened it."""

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.models import Chat
from core.crypto import unseal
from ingestion.models import Channel
from packages.models import ChannelPassword, MetadataStatus, Package, PasswordSource
from packages.services import channel_password_add
from tests.support.archives import PASSWORD, files, run, tool
from tests.support.ingestion import SOURCE, run_cycle, world

pytestmark = pytest.mark.django_db

CHANNEL_PASSWORD = "channel-Pa55"


@pytest.fixture
def archives(tmp_path) -> dict[str, Path]:
    """7z archives with encrypted headers: one per password, and one nobody has the password of."""
    (tmp_path / "in").mkdir()
    names = files(tmp_path / "in", ["model/body.stl", "model/base.stl"], size=3000)
    made = {}
    for name, password in [("captioned.7z", PASSWORD), ("kept.7z", CHANNEL_PASSWORD), ("lost.7z", "forgotten")]:
        run(tool("7z"), "a", f"-p{password}", "-mhe=on", str(tmp_path / name), *names, cwd=tmp_path / "in")
        made[name] = tmp_path / name
    return made


@pytest.fixture
def viewer() -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_user(username="viewer", password="s3cret-pass"))
    return client


def _channel() -> Channel:
    return Channel.objects.get(chat__telegram_id=SOURCE)


def test_an_archive_is_listed_with_the_password_of_its_caption_or_of_its_channel(ingest_world, storage, archives):
    ingest_world(
        world(
            messages=[
                {
                    "id": 11,
                    "text": f"Body and base\n🔑 {PASSWORD}",
                    "document": {"name": "captioned.7z", "file": str(archives["captioned.7z"])},
                },
                {
                    "id": 12,
                    "text": "no password here",
                    "document": {"name": "kept.7z", "file": str(archives["kept.7z"])},
                },
                {"id": 13, "text": "pass: wrong", "document": {"name": "lost.7z", "file": str(archives["lost.7z"])}},
            ]
        )
    )
    channel_password_add(chat_id=_channel().chat_id, password=CHANNEL_PASSWORD)

    assert run_cycle().ingested == 3

    packages = {package.file_name: package for package in Package.objects.all()}
    for name, source, password in [
        ("captioned.7z", PasswordSource.CAPTION, PASSWORD),
        ("kept.7z", PasswordSource.CHANNEL, CHANNEL_PASSWORD),
    ]:
        package = packages[name]
        assert package.metadata_status == MetadataStatus.COMPLETE, package.metadata_error
        assert sorted(package.files.values_list("path", flat=True)) == ["model/base.stl", "model/body.stl"]
        assert (package.password_source, unseal(package.password_sealed)) == (source, password)
        assert password not in package.password_sealed, "sealed, not stored as typed"
        assert package.metadata_error == (
            "Every file is encrypted: extracting it needs the password that opened it (see its caption)."
        )
    lost = packages["lost.7z"]
    assert (lost.metadata_status, lost.needs_password, lost.password_source) == (MetadataStatus.UNAVAILABLE, True, "")
    assert "None of the 2 password(s) offered (caption, channel) opened it." in lost.metadata_error


def test_operators_keep_a_channels_passwords_on_its_page_and_viewers_never_see_them(operator, viewer):
    chat = Chat.objects.create(telegram_id=SOURCE, title="Models A", type="channel")
    channel = Channel.objects.create(chat=chat)
    page = f"/channels/{channel.pk}/"

    added = operator.post(f"{page}passwords/", {"password": "  Dragon-Key-77 "}, HTTP_HX_REQUEST="true")
    twice = operator.post(f"{page}passwords/", {"password": "Dragon-Key-77"}, HTTP_HX_REQUEST="true")
    empty = operator.post(f"{page}passwords/", {"password": "   "}, HTTP_HX_REQUEST="true")
    refused = viewer.post(f"{page}passwords/", {"password": "viewer-guess"})

    kept = ChannelPassword.objects.get()
    assert unseal(kept.password_sealed) == "Dragon-Key-77" and kept.hint == "D•••7 (13)"
    assert added.status_code == 200 and "D•••7 (13)" in added.content.decode()
    assert twice.status_code == 400 and "This channel has that password already." in twice.content.decode()
    assert empty.status_code == 400 and "Type the password to add." in empty.content.decode()
    assert refused.status_code == 403 and ChannelPassword.objects.count() == 1
    operator_page, viewer_page = operator.get(page).content.decode(), viewer.get(page).content.decode()
    assert "D•••7 (13)" in operator_page and "Dragon-Key-77" not in operator_page
    assert "Operators keep 1 password for this channel's archives." in viewer_page
    assert "D•••7" not in viewer_page and "Dragon-Key-77" not in viewer_page

    removed = operator.post(f"{page}passwords/{kept.pk}/remove/", HTTP_HX_REQUEST="true")
    assert removed.status_code == 200 and "No password kept for this channel." in removed.content.decode()
    assert not ChannelPassword.objects.exists()


def test_the_api_adds_lists_and_removes_a_channels_passwords_for_operators_only(api, viewer):
    chat = Chat.objects.create(telegram_id=SOURCE, title="Models A", type="channel")
    channel = Channel.objects.create(chat=chat)
    url = f"/api/channels/{channel.pk}/passwords/"

    added = api.post(url, {"password": "Dragon-Key-77"}, format="json")
    listed = api.get(url)
    as_viewer = viewer.get(url)
    too_long = api.post(url, {"password": "x" * 201}, format="json")

    assert added.status_code == 201, added.json()
    assert set(added.json()) == {"id", "hint", "created_at"} and added.json()["hint"] == "D•••7 (13)"
    assert [item["hint"] for item in listed.json()] == ["D•••7 (13)"]
    assert "Dragon-Key-77" not in listed.content.decode()
    assert as_viewer.status_code == 403 and "Only operators" in as_viewer.json()["message"]
    assert too_long.status_code == 400 and "password" in too_long.json()["message"]
    assert api.delete(f"{url}{added.json()['id']}/").status_code == 204
    gone = api.delete(f"{url}{added.json()['id']}/")
    assert gone.status_code == 400 and "removed already" in gone.json()["message"]
    assert api.get(url).json() == []
