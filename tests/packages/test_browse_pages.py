"""The Packages page and API on ingested packages: filters, inline and bulk edits, matches highlighted in the
file tree, and the answer to "likely the same as …"."""

import pytest
from django.urls import reverse

from packages.models import Package, RepackDecision, SkippedFingerprint
from tests.support.ingestion import run_cycle, world, world_authorize_load

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("storage")]

HTMX = {"HTTP_HX_REQUEST": "true"}
DRAGON = [
    {"path": "dragon/body.stl", "size": 2000},
    {"path": "dragon/wings/left.stl", "size": 1500},
    {"path": "dragon/wings/right.stl", "size": 1500},
]
# The same files (same bytes: the same seeds) in another folder, as a 7z: a repack.
REPACK = [
    {"path": f"Dragon by Someone/{entry['path']}", "size": entry["size"], "seed": entry["path"]} for entry in DRAGON
]
MESSAGES = [
    {"id": 11, "document": {"name": "dragon.zip", "archive": DRAGON}},
    {"id": 12, "document": {"name": "castle.zip", "archive": [{"path": "castle/tower.stl", "size": 3000}]}},
    {"id": 13, "document": {"name": "Dragon (repack).7z", "archive": REPACK}},
]


def build_once() -> None:
    world_authorize_load(world(messages=MESSAGES))
    assert run_cycle().ingested == 3


@pytest.fixture
def ingested(built_copy) -> dict[str, Package]:
    """The three packages by file name (ingested once for the module)."""
    return {package.file_name: package for package in Package.objects.all()}


def test_the_repack_is_marked_on_the_list_and_answered_on_its_page(admin_client, ingested):
    repack, dragon = ingested["Dragon (repack).7z"], ingested["dragon.zip"]
    assert (repack.likely_same_as, repack.likely_same_overlap) == (dragon, 100)

    html = admin_client.get(reverse("packages:list"), {"repacks": "1"}).content.decode()
    assert "Likely repack" in html and "Dragon (repack).7z" in html and "castle.zip" not in html

    page = admin_client.get(reverse("packages:detail", args=[repack.pk])).content.decode()
    assert "Likely the same as" in page and "100 %" in page and "Skip future copies" in page

    response = admin_client.post(reverse("packages:repack-decide", args=[repack.pk]), {"decision": "skip_copies"})
    assert response.status_code == 302
    assert SkippedFingerprint.objects.get().package == dragon
    page = admin_client.get(response.url).content.decode()
    assert "not be uploaded" in page and "Keep both" in page

    refused = admin_client.post(reverse("packages:repack-decide", args=[dragon.pk]), {"decision": "kept"}, follow=True)
    assert "is not marked as a likely repack" in refused.content.decode()


def test_filters_answer_the_results_and_a_bad_one_says_why_keeping_the_input(admin_client, ingested):
    url = reverse("packages:list")
    html = admin_client.get(url, {"type": "7z"}, **HTMX).content.decode()
    assert "Dragon (repack).7z" in html and "castle.zip" not in html and "<html" not in html

    html = admin_client.get(url, {"size_min": "5", "size_max": "1", "q": "castle"}).content.decode()
    assert "The largest size is below the smallest" in html and "This filter is not applied" in html
    assert 'value="5"' in html and 'value="castle"' in html
    assert "castle.zip" in html  # the valid filters still apply

    html = admin_client.get(url, {"added_from": "not a date"}).content.decode()
    assert "Added from" in html and "valid date" in html


def test_search_counts_the_matching_files_and_the_tree_highlights_them(admin_client, ingested):
    html = admin_client.get(reverse("packages:list"), {"q": "ings/"}).content.decode()
    assert "2 files inside match" in html

    dragon = ingested["dragon.zip"]
    page = admin_client.get(reverse("packages:detail", args=[dragon.pk]), {"q": "ings/"}).content.decode()
    assert "2 files</mark> match" in page
    assert page.count('class="file-entry is-match"') == 2
    assert "<mark>left.stl</mark>" in page and "<mark>body.stl</mark>" not in page


def test_a_package_opened_from_a_search_of_its_name_shows_its_whole_tree(admin_client, ingested):
    castle = ingested["castle.zip"]
    page = admin_client.get(reverse("packages:detail", args=[castle.pk]), {"q": "castle.zip"}).content.decode()

    assert "0 files" not in page and "match “castle.zip”" not in page
    assert "“castle.zip” matched this package, not a file inside it" in page
    assert "<details open>" in page and "<details>" not in page
    assert f'href="{reverse("packages:list")}?q=castle.zip"' in page  # back to the search


def test_creator_and_tags_are_edited_in_place(admin_client, ingested):
    castle = ingested["castle.zip"]
    url = reverse("packages:edit", args=[castle.pk])
    form = admin_client.get(url, **HTMX).content.decode()
    assert 'name="creator"' in form and 'value="Models A"' in form

    refused = admin_client.post(url, {"creator": "Bob", "tags": "x" * 101 + ", terrain"}, **HTMX).content.decode()
    assert "at most 100 characters" in refused and 'value="Bob"' in refused and "terrain" in refused
    castle.refresh_from_db()
    assert castle.creator == "Models A"

    saved = admin_client.post(url, {"creator": "Bob", "tags": "terrain, Castles, terrain"}, **HTMX).content.decode()
    assert "Saved." in saved and "Bob" in saved
    castle.refresh_from_db()
    assert (castle.creator, castle.tags) == ("Bob", ["terrain", "Castles"])

    html = admin_client.get(reverse("packages:list"), {"tag": "Castles"}).content.decode()
    assert "castle.zip" in html and "dragon.zip" not in html


def test_bulk_edit_keeps_the_filters_and_refuses_an_empty_choice(admin_client, ingested):
    ids = [ingested["dragon.zip"].pk, ingested["Dragon (repack).7z"].pk]
    url = reverse("packages:bulk-edit") + "?q=dragon"
    html = admin_client.post(url, {"packages": ids, "creator": "Alice", "add_tags": "dragons"}, **HTMX).content.decode()
    assert "2 packages edited." in html and "castle.zip" not in html
    assert set(Package.objects.filter(creator="Alice").values_list("pk", flat=True)) == set(ids)
    assert all(package.tags == ["dragons"] for package in Package.objects.filter(pk__in=ids))

    html = admin_client.post(url, {"creator": "Nobody"}, **HTMX).content.decode()
    assert "Tick at least one package." in html and 'value="Nobody"' in html
    html = admin_client.post(url, {"packages": ids}, **HTMX).content.decode()
    assert "Give a creator, or tags to add or remove." in html


def test_the_api_filters_edits_and_answers_repacks(api, ingested):
    repack, dragon = ingested["Dragon (repack).7z"], ingested["dragon.zip"]
    body = api.get("/api/packages/", {"search": "ragon", "sort": "name"}).json()
    assert [row["file_name"] for row in body["results"]] == ["Dragon (repack).7z", "dragon.zip"]  # any case
    assert [row["matched_count"] for row in body["results"]] == [3, 3]

    bad = api.get("/api/packages/", {"size_min": 10, "size_max": 1})
    assert bad.status_code == 400 and "swap them" in bad.json()["message"]

    edited = api.patch(f"/api/packages/{dragon.pk}/", {"creator": "Alice", "tags": ["dragons"]}, format="json")
    assert edited.status_code == 200 and (edited.json()["creator"], edited.json()["tags"]) == ("Alice", ["dragons"])
    too_many = api.patch(f"/api/packages/{dragon.pk}/", {"tags": [f"t{n}" for n in range(21)]}, format="json")
    assert too_many.status_code == 400 and "at most 20 tags" in too_many.json()["message"]

    bulk = api.post("/api/packages/bulk-edit/", {"packages": [repack.pk], "add_tags": ["repack"]}, format="json")
    assert bulk.json() == {"message": "1 package edited.", "edited": 1}
    assert api.get("/api/packages/", {"tag": "repack"}).json()["count"] == 1

    decided = api.post(f"/api/packages/{repack.pk}/repack-decision/", {"decision": "kept"}, format="json")
    assert decided.status_code == 200 and decided.json()["repack_decision"] == RepackDecision.KEPT
    assert api.get("/api/packages/", {"likely_repacks": "true"}).json()["count"] == 0
    refused = api.post(f"/api/packages/{dragon.pk}/repack-decision/", {"decision": "kept"}, format="json")
    assert refused.status_code == 409 and "not marked" in refused.json()["message"]
