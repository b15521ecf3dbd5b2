"""The Packages page (search over names and archive listings) and a package's detail, on ingested packages (one
world for the module; pages of packages made by hand are in test_pages_made_by_hand.py)."""

import pytest
from django.urls import reverse

from ingestion.models import Channel, IngestionRun
from packages.models import MetadataStatus, Package, PackageFile
from packages.services import package_search_words_update
from tests.support.ingestion import DRAGON_AND_CASTLE, run_cycle, world, world_authorize_load
from tests.support.pages import HTMX
from tests.support.pages import package_search_results as results

pytestmark = pytest.mark.django_db


def build_once() -> None:
    world_authorize_load(world(messages=DRAGON_AND_CASTLE))
    assert run_cycle().ingested == 2


@pytest.fixture
def ingested(built_copy, storage) -> dict[str, Package]:
    """The two packages by file name (ingested once for the module)."""
    return {package.file_name: package for package in Package.objects.all()}


def test_pages_need_a_login(client, ingested):
    for url in [reverse("packages:list"), reverse("packages:detail", args=[ingested["dragon.zip"].pk])]:
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("login"))


def test_packages_page_lists_every_package_with_its_facts(admin_client, ingested):
    Package.objects.filter(pk=ingested["dragon.zip"].pk).update(tags=["Minis"])

    html = admin_client.get(reverse("packages:list")).content.decode()

    assert "2 packages" in html
    assert "dragon.zip" in html and "castle.7z.001" in html
    assert '<span class="type-tag">7z</span>' in html and '<span class="type-tag">zip</span>' in html
    assert 'class="chip chip--tag" href="?tag=Minis"' in html
    assert "Models A" in html, "the creator falls back to the channel"
    assert "Metadata pending" not in html and "Listing unavailable" not in html


def test_pending_and_unavailable_listings_are_flagged(admin_client, ingested):
    Package.objects.filter(pk=ingested["dragon.zip"].pk).update(metadata_status=MetadataStatus.PENDING)
    Package.objects.filter(pk=ingested["castle.7z.001"].pk).update(
        metadata_status=MetadataStatus.UNAVAILABLE, metadata_error="Bad 7z header"
    )

    html = admin_client.get(reverse("packages:list")).content.decode()

    assert ">Metadata pending<" in html
    assert ">Listing unavailable<" in html and 'title="Bad 7z header"' in html


def test_search_by_a_path_inside_an_archive_finds_the_package_once(admin_client, ingested):
    html = results(admin_client, "wings/")

    assert "<html" not in html, "HTMX gets the results only"
    assert "1 package match" in html
    assert html.count('aria-label="Choose dragon.zip"') == 1
    assert "castle" not in html
    assert "↳ dragon/wings/left.stl" in html and "↳ dragon/wings/right.stl" in html


def test_search_by_file_name_is_case_insensitive(admin_client, ingested):
    html = results(admin_client, "CASTLE.7z")

    assert "castle.7z.001" in html and "dragon.zip" not in html


def test_search_without_htmx_is_the_whole_page(admin_client, ingested):
    response = admin_client.get(reverse("packages:list"), {"q": "tower"})

    html = response.content.decode()
    assert "<html" in html and 'value="tower"' in html and "castle.7z.001" in html
    assert "HX-Request" in response["Vary"]


def test_a_search_that_finds_nothing_says_so(admin_client, ingested):
    assert "No package matches “griffin”" in results(admin_client, "griffin")


def test_pages_of_results_keep_the_search(admin_client, ingested):
    for number in range(30):
        package = Package.objects.create(
            content_hash=f"{number:064x}", file_name=f"orc-{number:02d}.zip", file_size=10, archive_type="zip"
        )
        PackageFile.objects.create(package=package, path=f"orcs/orc-{number:02d}.stl", size=10)
        package_search_words_update(package=package)

    first = results(admin_client, "orcs/")
    assert "30 packages match" in first and "Page 1 of 2" in first
    assert 'hx-get="?q=orcs%2F&amp;page=2"' in first

    second = admin_client.get(reverse("packages:list"), {"q": "orcs/", "page": 2}, **HTMX).content.decode()
    assert second.count("↳ orcs/") == 5


def test_package_detail_shows_the_file_tree_and_where_it_came_from(admin_client, ingested):
    dragon = ingested["dragon.zip"]

    html = admin_client.get(reverse("packages:detail", args=[dragon.pk])).content.decode()

    assert dragon.content_hash in html
    assert "Models A" in html and "Archive" in html
    for channel in Channel.objects.all():
        assert reverse("ingestion:channel-detail", args=[channel.pk]) in html
    assert f"run #{IngestionRun.objects.get().pk}" in html
    for message_id in dragon.dest_message_ids:
        assert f'<span class="mono">{message_id}</span>' in html
    assert "(top level)" in html and "README.txt" in html
    assert "dragon/" in html and "dragon/wings/" in html
    assert html.index("dragon/wings/") < html.index("left.stl") < html.index("right.stl")
    assert "4 in 3 folders" in html


def test_package_detail_of_a_multipart_set_lists_its_volumes_and_what_told_it_was_whole(admin_client, ingested):
    castle = ingested["castle.7z.001"]

    html = admin_client.get(reverse("packages:detail", args=[castle.pk])).content.decode()

    assert castle.part_count >= 3
    for name in castle.volume_names:
        assert name in html
    assert "digests, in order" in html
    assert "Known whole by 7z start header: the archive is " in html


def test_package_detail_shows_why_a_listing_is_unavailable(admin_client, ingested):
    dragon = ingested["dragon.zip"]
    Package.objects.filter(pk=dragon.pk).update(
        metadata_status=MetadataStatus.UNAVAILABLE, metadata_error="The archive needs a password."
    )
    PackageFile.objects.filter(package=dragon).delete()

    html = admin_client.get(reverse("packages:detail", args=[dragon.pk])).content.decode()

    assert "Listing unavailable" in html and "The archive needs a password." in html
    assert "No listing yet." in html


def test_the_admin_shows_a_package_and_its_run_read_only(admin_client, ingested):
    dragon = ingested["dragon.zip"]
    run = IngestionRun.objects.get()

    package_page = admin_client.get(reverse("admin:packages_package_change", args=[dragon.pk]))
    run_page = admin_client.get(reverse("admin:ingestion_ingestionrun_change", args=[run.pk])).content.decode()

    assert package_page.status_code == 200 and "Models A" in package_page.content.decode()
    assert "dragon.zip" in run_page and 'name="packages"' not in run_page


def test_a_viewer_sees_packages_without_edit_tick_or_send_controls(client, django_user_model, ingested):
    client.force_login(django_user_model.objects.create_user("viewer", password="x-pass-123"))
    package = Package.objects.order_by("pk").first()

    listing = client.get(reverse("packages:list")).content.decode()
    detail = client.get(reverse("packages:detail", args=[package.pk])).content.decode()

    assert package.file_name in listing and 'id="package-bulk"' not in listing and 'name="packages"' not in listing
    assert ">Edit</button>" not in listing and ">Edit</button>" not in detail
    assert "Operators send; you can follow the sends below." in detail and 'class="send-form"' not in detail


def test_an_operator_sees_the_edit_tick_and_send_controls(admin_client, ingested):
    package = Package.objects.order_by("pk").first()

    listing = admin_client.get(reverse("packages:list")).content.decode()
    detail = admin_client.get(reverse("packages:detail", args=[package.pk])).content.decode()

    assert 'id="package-bulk"' in listing and 'name="packages"' in listing and ">Edit</button>" in listing
    assert ">Edit</button>" in detail and "Operators send" not in detail
