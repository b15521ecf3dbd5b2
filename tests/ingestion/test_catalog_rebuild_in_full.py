"""A catalog rebuilt from a destination whose RAR set cannot be walked in place: read in full, last."""

import pytest

from packages.models import Package
from tests.support.archives import RAR_FIXTURES
from tests.support.ingestion import catalog_rebuild, package_listing, run_cycle, world

pytestmark = pytest.mark.django_db


def test_a_rar_set_that_cannot_be_walked_in_place_is_read_in_full_last(ingest_world):
    # RAR 5 volumes posted under old-style names: rarfile cannot name the volume after the first one.
    renamed = [("rar", "rar5-vols.part1.rar"), ("r00", "rar5-vols.part2.rar"), ("r01", "rar5-vols.part3.rar")]
    messages = [
        {"id": 10 + number, "document": {"name": f"oldnames.{suffix}", "file": str(RAR_FIXTURES / name)}}
        for number, (suffix, name) in enumerate(renamed)
    ]
    messages.append({"id": 20, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 9}]}})
    ingest_world(world(messages=messages))
    assert run_cycle().ingested == 2
    listings = {package.file_name: package_listing(package) for package in Package.objects.all()}
    Package.objects.all().delete()

    out = catalog_rebuild()

    assert "1 listings read in place" in out and "1 read in full (oldnames.rar)" in out
    assert out.index("dragon.zip: 1 files") < out.index("[2/2] oldnames.rar: unreadable archive:"), "queued, last"
    # The same listing (and the same verdict on it) as ingestion's, whose message names its own folder.
    rebuilt = {package.file_name: package_listing(package) for package in Package.objects.all()}
    assert {name: (listing[0], *listing[2:]) for name, listing in rebuilt.items()} == {
        name: (listing[0], *listing[2:]) for name, listing in listings.items()
    }
