"""The Packages pages on packages a test makes by hand: an unknown one, unsafe entries, the search's count cap,
the admin's raw files."""

import pytest
from django.urls import reverse

from packages.models import MetadataStatus, Package
from packages.services import package_search_words_update
from tests.support.pages import HTMX
from tests.support.pages import package_search_results as results

pytestmark = pytest.mark.django_db


def test_an_unknown_package_is_404(admin_client):
    assert admin_client.get(reverse("packages:detail", args=[999999])).status_code == 404


def test_a_complete_listing_with_unsafe_entries_warns_on_its_page(admin_client):
    package = Package.objects.create(
        content_hash="c" * 64,
        file_name="sneaky.zip",
        file_size=1,
        archive_type="zip",
        metadata_status=MetadataStatus.COMPLETE,
        metadata_error="1 of 2 entries point outside the archive (../, an absolute path or a link).",
    )

    html = admin_client.get(reverse("packages:detail", args=[package.pk])).content.decode()

    assert "Careful:" in html and "point outside the archive" in html


def test_a_search_matching_more_than_the_cap_says_so_and_still_pages(admin_client, monkeypatch):
    from packages.views import search as views

    monkeypatch.setattr(views, "SEARCH_COUNT_CAP", 3)
    monkeypatch.setattr(views, "PER_PAGE", 2)
    for number in range(5):
        package = Package.objects.create(
            content_hash=f"{number:064x}", file_name=f"dragon {number}.zip", file_size=1, archive_type="zip"
        )
        package_search_words_update(package=package)

    html = results(admin_client, "dragon")
    assert "More than 1,000" not in html and "More than 3 packages match “dragon”; add a word" in html
    assert "dragon 4.zip" in html and "dragon 3.zip" in html
    second = admin_client.get(reverse("packages:list"), {"q": "dragon", "page": 2}, **HTMX).content.decode()
    assert "dragon 2.zip" in second and "dragon 1.zip" in second
    assert "1 package matches “dragon 2”" in results(admin_client, "dragon 2")


def test_raw_files_cannot_be_added_by_hand_in_the_admin(admin_client):
    """A raw file is what ingestion kept of a download: the admin offers no form for one (an empty one was a 500)."""
    assert admin_client.get("/admin/packages/rawfile/add/").status_code == 403
    assert admin_client.post("/admin/packages/rawfile/add/", {}).status_code == 403
    assert admin_client.get("/admin/packages/rawfile/").status_code == 200
