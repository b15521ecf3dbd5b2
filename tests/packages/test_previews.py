"""Previews, end to end through an ingestion cycle on the sandbox server: the photo posted with an archive (same
album, or close by in the same topic with a caption that names it), else the first image inside the archive;
thumbnails kept through Django's storage and served only to logged-in users; the picker; the grid."""

import html
import io
import zipfile
import zlib

import pytest
from django.core.files.storage import default_storage
from django.urls import reverse
from PIL import Image

from packages.archives import read_archive, thumbnail_make
from packages.models import Package, PackagePreview, PreviewSource
from packages.services import package_metadata_backfill
from tests.support.ingestion import run_cycle, world

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
RENDERS = [
    {"path": "dragon/body.stl", "size": 2000},
    {"path": "renders/b-side.png", "picture": True},
    {"path": "renders/a-front.jpg", "picture": True},
    {"path": "renders/broken.jpg", "size": 300},  # named like a picture, holds none
]


@pytest.fixture(autouse=True)
def storage(storage, settings):
    settings.PACKAGE_PREVIEW_PHOTO_WINDOW_SECONDS = 600


def zip_of(name: str, entries=None) -> dict:
    return {"name": name, "archive": entries or [{"path": f"{name}/model.stl", "size": 500}]}


def forum_world(messages):
    return world(messages=messages, forum=True, topics=[{"id": 42, "title": "Dragons"}, {"id": 43, "title": "Knights"}])


def image_of(preview: PackagePreview) -> Image.Image:
    with default_storage.open(preview.image.name, "rb") as handle:
        return Image.open(io.BytesIO(handle.read()))


def test_the_photo_of_the_same_album_is_the_preview(ingest_world):
    ingest_world(
        forum_world(
            [
                {"id": 100, "topic": 42, "photo": {"caption": "look"}, "album": 7},
                {"id": 101, "topic": 42, "document": zip_of("wyrm.zip", RENDERS), "album": 7},
            ]
        )
    )
    assert run_cycle().ingested == 1
    package = Package.objects.get()
    assert package.preview.source == PreviewSource.PHOTO
    assert package.preview.source_message_id == 100
    image = image_of(package.preview)
    assert (image.format, max(image.size)) == ("JPEG", 480)
    # The archive's images are still there to pick from.
    assert {p.path for p in package.previews.filter(source=PreviewSource.ARCHIVE)} == {
        "renders/a-front.jpg",
        "renders/b-side.png",
    }


def test_a_nearby_photo_counts_only_in_its_topic_window_and_when_its_caption_names_the_archive(ingest_world):
    ingest_world(
        forum_world(
            [
                {"id": 100, "topic": 42, "photo": {"caption": "Red Dragon, painted"}},
                {"id": 101, "topic": 42, "photo": {"caption": "something else entirely"}},
                {"id": 102, "topic": 43, "photo": {"caption": "red dragon in another topic"}},
                # Names the dragon even better, but shows the archive of its own album.
                {"id": 103, "topic": 42, "photo": {"caption": "red dragon v2 base"}, "album": 77},
                {"id": 104, "topic": 42, "document": zip_of("base.zip"), "album": 77},
                {"id": 106, "topic": 42, "photo": {"caption": "castle ruins, north tower"}},
                {"id": 110, "topic": 42, "document": zip_of("red-dragon_v2.zip")},
                {"id": 119, "topic": 42, "photo": {"caption": "a tower"}},
                {"id": 120, "topic": 42, "document": zip_of("keep.zip", RENDERS)},
                {"id": 121, "topic": 42, "document": zip_of("north tower.zip")},
                {"id": 2000, "topic": 42, "photo": {"caption": "knight, posted much later"}},
                {"id": 3000, "topic": 42, "document": zip_of("knight.zip")},
            ]
        )
    )
    assert run_cycle().ingested == 5
    by_name = {package.file_name: package for package in Package.objects.all()}
    dragon = by_name["red-dragon_v2.zip"]
    assert (dragon.preview.source, dragon.preview.source_message_id) == (PreviewSource.PHOTO, 100)
    assert by_name["base.zip"].preview.source_message_id == 103
    # The photo that names more of it wins over a nearer one.
    assert by_name["north tower.zip"].preview.source_message_id == 106
    # No photo names the keep: the first image inside it, by path (the broken one is left out).
    keep = by_name["keep.zip"]
    assert (keep.preview.source, keep.preview.path) == (PreviewSource.ARCHIVE, "renders/a-front.jpg")
    assert [p.path for p in keep.previews.all()] == ["renders/a-front.jpg", "renders/b-side.png"]
    # The knight's photo is 1000 s away, outside the 600 s window; the archive has no image.
    assert by_name["knight.zip"].preview is None


def test_a_backfilled_listing_also_makes_the_archive_previews(ingest_world):
    ingest_world(world(messages=[{"id": 11, "document": zip_of("castle.zip", RENDERS)}]))
    run_cycle()
    package = Package.objects.get()
    PackagePreview.objects.all().delete()
    package.refresh_from_db()
    assert package.preview is None
    package_metadata_backfill(package=package)
    package.refresh_from_db()
    assert package.preview.path == "renders/a-front.jpg"
    assert package.previews.count() == 2


@pytest.fixture
def with_previews(ingest_world):
    ingest_world(
        world(
            messages=[
                {"id": 10, "photo": {"caption": "castle on the hill"}},
                {"id": 11, "document": zip_of("castle.zip", RENDERS)},
                {"id": 12, "document": zip_of("plain.zip")},
            ]
        )
    )
    assert run_cycle().ingested == 2
    return Package.objects.get(file_name="castle.zip")


def test_thumbnails_are_served_to_logged_in_users_only(client, admin_user, with_previews):
    url = reverse("packages:preview-image", args=[with_previews.pk, with_previews.preview_id])
    anonymous = client.get(url)
    assert anonymous.status_code == 302 and "/login/" in anonymous["Location"]
    client.force_login(admin_user)
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "image/jpeg"
    assert Image.open(io.BytesIO(b"".join(response.streaming_content))).format == "JPEG"
    other = Package.objects.get(file_name="plain.zip")
    assert client.get(reverse("packages:preview-image", args=[other.pk, with_previews.preview_id])).status_code == 404


def test_the_picker_sets_another_image_and_refuses_one_of_another_package(client, admin_user, with_previews):
    client.force_login(admin_user)
    package = with_previews
    assert package.preview.source == PreviewSource.PHOTO
    page = client.get(reverse("packages:detail", args=[package.pk])).content.decode()
    inside = package.previews.get(path="renders/b-side.png")
    assert f'value="{inside.pk}"' in page and "The photo posted with the archive" in page

    response = client.post(reverse("packages:preview-choose", args=[package.pk]), {"preview": inside.pk}, **HTMX)
    assert response.status_code == 200
    assert "Preview changed." in response.content.decode() and "renders/b-side.png" in response.content.decode()
    package.refresh_from_db()
    assert package.preview == inside

    stranger = PackagePreview.objects.create(
        package=Package.objects.get(file_name="plain.zip"), source="archive", path="x.jpg", image="x", width=1, height=1
    )
    refused = client.post(reverse("packages:preview-choose", args=[package.pk]), {"preview": stranger.pk}, **HTMX)
    assert f"Image {stranger.pk} is not one of this package's images." in html.unescape(refused.content.decode())
    package.refresh_from_db()
    assert package.preview == inside

    # Posted before htmx was loaded (or without JavaScript): the page it comes back to says what happened.
    back = client.post(reverse("packages:preview-choose", args=[package.pk]), {"preview": stranger.pk}, follow=True)
    assert f"Image {stranger.pk} is not one of this package&#x27;s images." in back.content.decode()
    photo = package.previews.get(source=PreviewSource.PHOTO)
    back = client.post(reverse("packages:preview-choose", args=[package.pk]), {"preview": photo.pk}, follow=True)
    assert "Preview changed." in back.content.decode()


def test_the_grid_shows_previews_and_a_placeholder(client, admin_user, with_previews):
    client.force_login(admin_user)
    page = client.get(reverse("packages:list"), {"view": "grid"}).content.decode()
    assert 'class="package-grid"' in page
    assert reverse("packages:preview-image", args=[with_previews.pk, with_previews.preview_id]) in page
    assert "package-card-image--none" in page  # plain.zip has no image
    assert 'href="?view=grid"' not in page or 'aria-current="page">Grid of previews' in page
    search = client.get(reverse("packages:list"), {"view": "grid", "q": "plain"}, **HTMX).content.decode()
    assert "plain.zip" in search and "castle.zip" not in search and "package-grid" in search


def test_the_api_lists_previews_and_picks_one(api, with_previews):
    package = with_previews
    body = api.get(f"/api/packages/{package.pk}/").json()
    assert body["preview"] == package.preview_id
    assert body["preview_url"] == reverse("packages:preview-image", args=[package.pk, package.preview_id])
    assert [(item["source"], item["path"]) for item in body["previews"]] == [
        ("photo", ""),
        ("archive", "renders/a-front.jpg"),
        ("archive", "renders/b-side.png"),
    ]
    chosen = body["previews"][2]["id"]
    picked = api.post(f"/api/packages/{package.pk}/preview/", {"preview": chosen}, format="json")
    assert picked.status_code == 200 and picked.json()["preview"] == chosen
    stranger = api.post(f"/api/packages/{package.pk}/preview/", {"preview": 987654}, format="json")
    assert stranger.status_code == 400
    assert "Image 987654 is not one of this package's images." in stranger.json()["message"]
    listed = api.get("/api/packages/").json()["results"]
    assert {item["file_name"]: item["preview_url"] is not None for item in listed} == {
        "castle.zip": True,
        "plain.zip": False,
    }


def _png_claiming(width: int, height: int) -> bytes:
    """A small real PNG whose header claims another size (a decompression bomb's trick)."""
    out = io.BytesIO()
    Image.new("L", (8, 8)).save(out, format="PNG")
    data = bytearray(out.getvalue())
    data[16:24] = width.to_bytes(4, "big") + height.to_bytes(4, "big")
    data[29:33] = zlib.crc32(bytes(data[12:29])).to_bytes(4, "big")
    return bytes(data)


def test_a_hostile_image_costs_its_thumbnail_never_the_listing(tmp_path):
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("a/bomb.png", _png_claiming(60_000, 60_000))
        out.writestr("b/fine.png", _png_claiming(8, 8))
        out.writestr("c/model.stl", b"solid x")
    listing = read_archive("zip", [archive], thumbnails=8)
    assert [entry.path for entry in listing.entries] == ["a/bomb.png", "b/fine.png", "c/model.stl"]
    assert [thumbnail.path for thumbnail in listing.thumbnails] == ["b/fine.png"]
    with pytest.raises(ValueError, match="not a picture"):
        thumbnail_make(_png_claiming(60_000, 60_000))
