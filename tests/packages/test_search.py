import pytest
from django.db import connection

from packages.models import Package, PackageFile
from packages.selectors import package_search
from packages.services import package_search_words_update

pytestmark = pytest.mark.django_db


@pytest.fixture
def packages():
    dragon = Package.objects.create(
        content_hash="a" * 64, file_name="Red-Dragon_v2.zip", file_size=1, archive_type="zip"
    )
    PackageFile.objects.create(package=dragon, path="red-dragon/Body.STL", size=1)
    PackageFile.objects.create(package=dragon, path="red-dragon/wings.stl", size=1)
    tower = Package.objects.create(content_hash="b" * 64, file_name="tower.7z", file_size=1, archive_type="7z")
    PackageFile.objects.create(package=tower, path="ruins/тауэр/base.obj", size=1)
    for package in (dragon, tower):
        package_search_words_update(package=package)
    return dragon, tower


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("dragon", {"Red-Dragon_v2.zip"}),
        ("drag bod", {"Red-Dragon_v2.zip"}),  # word prefixes, in any order, across the path
        ("body.stl", {"Red-Dragon_v2.zip"}),
        ("v2", {"Red-Dragon_v2.zip"}),
        ("tower", {"tower.7z"}),
        ("base obj", {"tower.7z"}),
        ("тауэр", {"tower.7z"}),  # not a word the index sees: a substring
        ("agon", {"Red-Dragon_v2.zip"}),  # inside a word: a substring of the name and of the paths
        ("GON_v", {"Red-Dragon_v2.zip"}),  # across a word's end, in any case
        ("ngs.st", {"Red-Dragon_v2.zip"}),
        ("uins/та", {"tower.7z"}),
        ("ag", set()),  # two letters: word prefixes only
        ("wyvern", set()),
        ("dragon wyvern", set()),
    ],
)
def test_search_by_name_and_by_paths_inside(packages, query, found):
    assert {package.file_name for package in package_search(query=query)} == found


def test_the_match_shows_the_paths_that_matched_and_how_many(packages):
    (dragon,) = package_search(query="wings")
    assert [file.path for file in dragon.matched_files] == ["red-dragon/wings.stl"]
    assert dragon.matched_count == 1
    (dragon,) = package_search(query="stl")
    assert dragon.matched_count == 2
    (dragon,) = package_search(query="_v2")
    assert dragon.matched_count is None  # the name matched, no path inside


def test_the_substring_search_uses_the_trigram_index(packages):
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        sql, params = package_search(query="тауэр").order_by().query.sql_with_params()
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("SET enable_seqscan = on")
    assert "package_name_grams" in plan, plan


def test_the_word_search_uses_the_gin_index(packages):
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        sql, params = package_search(query="dragon").order_by().query.sql_with_params()
        cursor.execute("EXPLAIN " + sql, params)
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("SET enable_seqscan = on")
    assert "package_search_words" in plan, plan
