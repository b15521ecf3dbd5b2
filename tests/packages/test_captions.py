"""Captions kept: the source post's text stays with its package (and each volume's with it), is searchable, and is
shown on the package page and in the API; passwords in it are masked wherever a viewer reads it."""

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from rest_framework.test import APIClient

from core.crypto import seal
from packages.models import Package, PasswordSource
from packages.selectors import PackageFilters, package_search
from packages.services import package_search_words_update
from tests.support.ingestion import run_cycle, world, world_authorize_load

pytestmark = pytest.mark.django_db

CAPTIONED = [
    {
        "id": 11,
        "text": "Red Wyvern by Hollowforge\nSupported, 32 mm\npass: hunter2",
        "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]},
    },
    {
        "id": 20,
        "text": "Castle keep (all volumes)",
        "volume_texts": ["Castle keep (all volumes)", "", "volume three of the castle"],
        "document": {
            "name": "castle.7z",
            "archive": [{"path": "castle/tower.stl", "size": 300_000}],
            "volume_size": 131_072,
        },
    },
    {"id": 30, "document": {"name": "bust.stl", "size": 4000, "seed": 3}},
]


def build_once() -> None:
    world_authorize_load(world(messages=CAPTIONED))
    assert run_cycle().ingested == 3


@pytest.fixture
def ingested(built_copy, storage) -> dict[str, Package]:
    """The three packages by file name (ingested once for the module)."""
    return {package.file_name: package for package in Package.objects.all()}


@pytest.fixture
def viewer():
    user = get_user_model().objects.create_user(username="viewer", password="s3cret-pass")
    client = Client()
    client.force_login(user)
    return client


def _found(query: str) -> set[str]:
    return {package.file_name for package in package_search(filters=PackageFilters(query=query))}


def test_the_source_caption_is_kept_with_the_package_and_each_volume(ingested):
    dragon, castle, bust = ingested["dragon.zip"], ingested["castle.7z.001"], ingested["bust.stl"]

    assert dragon.caption == CAPTIONED[0]["text"]
    assert dragon.volume_captions == [CAPTIONED[0]["text"]]
    assert castle.caption == "Castle keep (all volumes)"
    assert castle.volume_captions == ["Castle keep (all volumes)", "", "volume three of the castle"]
    assert (bust.caption, bust.volume_captions) == ("", [""])


def test_a_caption_is_searchable_but_not_its_password(ingested):
    assert _found("hollowforge") == {"dragon.zip"}
    assert _found("wyvern 32") == {"dragon.zip"}
    assert _found("castle keep") == {"castle.7z.001"}
    assert _found("hunter2") == set()
    assert _found("unter") == set()


def test_the_api_shows_the_caption_as_posted_to_operators_and_masked_to_viewers(ingested, operator, viewer):
    dragon, castle = ingested["dragon.zip"], ingested["castle.7z.001"]

    as_operator = operator.get(f"/api/packages/{dragon.pk}/").json()
    as_viewer = viewer.get(f"/api/packages/{dragon.pk}/").json()
    listed = viewer.get("/api/packages/", {"search": "wyvern"}).json()["results"]

    assert as_operator["caption"] == CAPTIONED[0]["text"]
    assert as_viewer["caption"] == "Red Wyvern by Hollowforge\nSupported, 32 mm\npass: ••••••"
    assert [package["caption"] for package in listed] == [as_viewer["caption"]]
    assert "hunter2" not in str(viewer.get(f"/api/packages/{dragon.pk}/").content)
    assert viewer.get(f"/api/packages/{castle.pk}/").json()["volume_captions"] == [
        {"volume": "castle.7z.003", "caption": "volume three of the castle"}
    ]


def test_the_package_page_shows_the_caption_and_which_password_opened_it(ingested, operator, viewer):
    dragon = ingested["dragon.zip"]
    Package.objects.filter(pk=dragon.pk).update(password_sealed=seal("hunter2"), password_source=PasswordSource.CAPTION)

    operator_page = operator.get(f"/packages/{dragon.pk}/").content.decode()
    viewer_page = viewer.get(f"/packages/{dragon.pk}/").content.decode()

    assert "Red Wyvern by Hollowforge<br>Supported, 32 mm<br>pass: hunter2" in operator_page
    assert "Show password" in operator_page
    assert "Red Wyvern by Hollowforge<br>Supported, 32 mm<br>pass: ••••••" in viewer_page
    assert "the password found in the caption" in viewer_page
    assert "hunter2" not in viewer_page
    assert "Show password" not in viewer_page
    preview = viewer.get(f"/packages/{dragon.pk}/send/preview/").content.decode()
    assert "pass: ••••••" in preview and "hunter2" not in preview
    api = APIClient()
    api.force_login(get_user_model().objects.get(username="viewer"))
    assert api.get(f"/api/packages/{dragon.pk}/").json()["password"] is None
    assert operator.get(f"/api/packages/{dragon.pk}/").json()["password"] == "hunter2"


def test_a_package_ingested_before_captions_were_kept_says_so(operator):
    old = Package.objects.create(content_hash="c" * 64, file_name="old.zip", file_size=1, archive_type="zip")
    package_search_words_update(package=old)

    page = operator.get(f"/packages/{old.pk}/").content.decode()

    assert "No caption kept (ingested before captions were)." in page
    assert operator.get(f"/api/packages/{old.pk}/").json()["caption"] == ""
