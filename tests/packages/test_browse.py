"""Browse and edit: filters and sorts, creator and tags edited one by one and in bulk, channel categories."""

from datetime import date, timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from ingestion.services import channel_update
from packages.models import Package
from packages.selectors import PackageFilters, package_search
from packages.services import package_edit, package_search_words_update, packages_bulk_edit
from tests.support.factories import channel

pytestmark = pytest.mark.django_db


@pytest.fixture
def shelf():
    """Three packages from two channels, of two types and sizes, added on three days."""
    minis, terrain = channel("Minis", category="Miniatures"), channel("Terrain")
    now = timezone.now()
    rows = [
        ("dragon.zip", "zip", 5_000_000, minis, "Alice", ["Miniatures", "dragons"], now - timedelta(days=2)),
        ("tower.7z", "7z", 50_000_000, terrain, "Bob", ["scenery"], now - timedelta(days=1)),
        ("goblin.zip", "zip", 500_000, minis, "Alice", ["Miniatures"], now),
    ]
    for name, kind, size, source, creator, tags, created in rows:
        package = Package.objects.create(
            content_hash=name.encode().hex().ljust(64, "0"),
            file_name=name,
            file_size=size,
            archive_type=kind,
            source_chat=source.chat,
            creator=creator,
            tags=tags,
            created_at=created,
        )
        package_search_words_update(package=package)
    return minis, terrain


def names(**filters) -> list[str]:
    return [package.file_name for package in package_search(filters=PackageFilters(**filters))]


def test_filters_narrow_the_list(shelf):
    minis, terrain = shelf
    today = timezone.localdate()
    assert names() == ["goblin.zip", "tower.7z", "dragon.zip"]
    assert names(creator="Alice") == ["goblin.zip", "dragon.zip"]
    assert names(tag="dragons") == ["dragon.zip"]
    assert names(channel=terrain.pk) == ["tower.7z"]
    assert names(archive_type="zip") == ["goblin.zip", "dragon.zip"]
    assert names(size_min=1_000_000, size_max=10_000_000) == ["dragon.zip"]
    assert names(added_from=today - timedelta(days=1)) == ["goblin.zip", "tower.7z"]
    assert names(added_to=today - timedelta(days=1)) == ["tower.7z", "dragon.zip"]
    assert names(added_from=date(2000, 1, 1), added_to=date(2000, 1, 2)) == []
    assert names(creator="Alice", archive_type="zip", query="gob") == ["goblin.zip"]


@pytest.mark.parametrize(
    ("sort", "expected"),
    [
        ("newest", ["goblin.zip", "tower.7z", "dragon.zip"]),
        ("oldest", ["dragon.zip", "tower.7z", "goblin.zip"]),
        ("name", ["dragon.zip", "goblin.zip", "tower.7z"]),
        ("largest", ["tower.7z", "dragon.zip", "goblin.zip"]),
        ("smallest", ["goblin.zip", "dragon.zip", "tower.7z"]),
    ],
)
def test_sorts(shelf, sort, expected):
    assert names(sort=sort) == expected


def test_editing_a_package_trims_and_dedupes_its_tags(shelf):
    dragon = Package.objects.get(file_name="dragon.zip")
    package_edit(package=dragon, creator="  Alice   Smith ", tags=[" Dragons", "dragons", "", "Big  ones"])
    dragon.refresh_from_db()
    assert (dragon.creator, dragon.tags) == ("Alice Smith", ["Dragons", "Big ones"])

    with pytest.raises(ValidationError, match="at most 100 characters"):
        package_edit(package=dragon, tags=["x" * 101])
    with pytest.raises(ValidationError, match="at most 20 tags"):
        package_edit(package=dragon, tags=[f"t{n}" for n in range(21)])


def test_bulk_edit_sets_the_creator_and_adds_and_removes_tags(shelf):
    ids = list(Package.objects.filter(archive_type="zip").values_list("pk", flat=True))
    assert packages_bulk_edit(package_ids=ids, creator="Carol", add_tags=["sale"], remove_tags=["miniatures"]) == 2
    edited = {p.file_name: (p.creator, p.tags) for p in Package.objects.all()}
    assert edited == {
        "dragon.zip": ("Carol", ["dragons", "sale"]),
        "goblin.zip": ("Carol", ["sale"]),
        "tower.7z": ("Bob", ["scenery"]),
    }
    with pytest.raises(ValidationError, match="Give a creator"):
        packages_bulk_edit(package_ids=ids)
    with pytest.raises(ValidationError, match="at least one package"):
        packages_bulk_edit(package_ids=[], creator="x")


def test_a_new_channel_category_is_re_applied_to_its_packages(shelf):
    minis, terrain = shelf
    channel_update(channel=minis, category="Figures")
    channel_update(channel=terrain, category="Terrain")
    tags = {p.file_name: p.tags for p in Package.objects.all()}
    assert tags == {"dragon.zip": ["dragons", "Figures"], "goblin.zip": ["Figures"], "tower.7z": ["scenery", "Terrain"]}

    channel_update(channel=minis, category="")
    assert Package.objects.get(file_name="goblin.zip").tags == []
    assert Package.objects.get(file_name="tower.7z").tags == ["scenery", "Terrain"]  # another channel's packages
