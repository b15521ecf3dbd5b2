"""Collections: grouped as packages arrive (album, reply chain, same base name or named creator within the window,
in one topic), and edited by operators through the API and the pages (create, rename, merge, dissolve)."""

import pytest
from django.test import override_settings
from django.urls import reverse

from packages.grouping import base_name
from packages.models import Collection, GroupingRule, Package
from telegram.sandbox.world import World
from tests.support.ingestion import SOURCE, run_cycle, world, world_authorize_load

pytestmark = pytest.mark.django_db

HOUR = 3600
WINDOW_SECONDS = 6 * HOUR


@pytest.fixture(autouse=True)
def storage(storage, settings):
    settings.PACKAGE_COLLECTION_WINDOW_SECONDS = WINDOW_SECONDS


def zip_of(name: str) -> dict:
    return {"name": name, "archive": [{"path": f"{name}/model.stl", "size": 300}]}


MESSAGES = [
    # One album: the parts of one model.
    {"id": 10, "topic": 42, "document": zip_of("ship hull.zip"), "album": 5},
    {"id": 11, "topic": 42, "document": zip_of("ship sails.zip"), "album": 5},
    # A reply chain: the base, an add-on answering it, and one more answering the add-on.
    {"id": 20, "topic": 42, "document": zip_of("tower base.zip")},
    {"id": 21, "topic": 42, "document": zip_of("tower roof.zip"), "reply_to": 20},
    {"id": 22, "topic": 42, "document": zip_of("tower flag.zip"), "reply_to": 21},
    # Two archives answering the same announcement.
    {"id": 30, "topic": 42, "text": "This month's drop"},
    {"id": 31, "topic": 42, "document": zip_of("golem.zip"), "reply_to": 30},
    {"id": 32, "topic": 42, "document": zip_of("imp.zip"), "reply_to": 30},
    # Versions of one model close together; a third far later; a namesake in another topic.
    {"id": 40, "topic": 42, "document": zip_of("Red-Dragon_v1.zip")},
    {"id": 41, "topic": 42, "document": zip_of("red dragon v2.zip")},
    {"id": 40 + 10 * HOUR, "topic": 42, "document": zip_of("red_dragon_final.zip")},
    {"id": 42, "topic": 43, "document": zip_of("red dragon v3.zip")},
    # A creator named in the file name (in General: a named topic's title is its packages' creator, which
    # says nothing about which belong together).
    {"id": 50, "topic": 1, "document": zip_of("[Sculptor] Orc.zip")},
    {"id": 51, "topic": 1, "document": zip_of("[Sculptor] Elf.zip")},
    {"id": 60, "topic": 43, "document": zip_of("lone knight.zip")},
    {"id": 61, "topic": 43, "document": zip_of("lone horse.zip")},
]


def build_once() -> None:
    with override_settings(PACKAGE_COLLECTION_WINDOW_SECONDS=WINDOW_SECONDS):
        world_authorize_load(
            world(
                messages=MESSAGES,
                forum=True,
                topics=[{"id": 42, "title": "Fantasy"}, {"id": 43, "title": "Knights"}],
            )
        )
        assert run_cycle().ingested == 15


@pytest.fixture
def grouped(built_copy):
    """The fifteen packages by file name, grouped (the world is ingested once for the module)."""
    return {package.file_name: package for package in Package.objects.select_related("collection")}


def members(packages, collection) -> set[str]:
    return {name for name, package in packages.items() if package.collection_id == collection.pk}


def test_base_names_drop_archive_suffixes_and_version_words():
    assert base_name("Red-Dragon_v1.zip") == base_name("red dragon v2.7z") == "red dragon"
    assert base_name("red_dragon_final.part1.rar") == "red dragon"
    assert base_name("v2.zip") == "v2"


def test_packages_are_grouped_by_album_reply_chain_name_and_creator(grouped):
    def collection_of(name):
        return grouped[name].collection

    ship = collection_of("ship hull.zip")
    assert (ship.rule, ship.name, members(grouped, ship)) == ("album", "ship", {"ship hull.zip", "ship sails.zip"})
    assert grouped["ship sails.zip"].collection_rule == GroupingRule.ALBUM

    tower = collection_of("tower base.zip")
    assert (tower.rule, tower.name) == ("reply", "tower")
    assert members(grouped, tower) == {"tower base.zip", "tower roof.zip", "tower flag.zip"}
    drop = collection_of("golem.zip")
    assert members(grouped, drop) == {"golem.zip", "imp.zip"} and (drop.rule, drop.name) == ("reply", "golem")

    dragon = collection_of("Red-Dragon_v1.zip")
    assert (dragon.rule, dragon.name) == ("base_name", "red dragon")
    assert members(grouped, dragon) == {"Red-Dragon_v1.zip", "red dragon v2.zip"}  # not 10 h later, not topic 43
    assert collection_of("red_dragon_final.zip") is None and collection_of("red dragon v3.zip") is None

    sculptor = collection_of("[Sculptor] Orc.zip")
    assert (sculptor.rule, sculptor.name) == ("creator", "Sculptor")
    assert members(grouped, sculptor) == {"[Sculptor] Orc.zip", "[Sculptor] Elf.zip"}
    # Their creator is the topic's title, which says nothing: no collection.
    assert collection_of("lone knight.zip") is None and collection_of("lone horse.zip") is None
    assert Collection.objects.count() == 5
    assert {c.source_topic_id for c in Collection.objects.all()} == {42, 1}


def test_operators_create_rename_merge_and_dissolve_through_the_api(api, grouped):
    knight, horse = grouped["lone knight.zip"], grouped["lone horse.zip"]
    created = api.post("/api/collections/", {"name": "Knights", "packages": [knight.pk, horse.pk]}, format="json")
    assert created.status_code == 201, created.json()
    body = created.json()
    assert (body["name"], body["rule"], body["package_count"]) == ("Knights", "operator", 2)
    knights = Collection.objects.get(pk=body["id"])

    renamed = api.patch(f"/api/collections/{knights.pk}/", {"name": "Knights of old"}, format="json")
    assert renamed.json()["name"] == "Knights of old"
    blank = api.patch(f"/api/collections/{knights.pk}/", {"name": "   "}, format="json")
    assert blank.status_code == 400 and blank.json()["message"]

    listed = api.get("/api/packages/", {"collection": knights.pk}).json()
    assert {item["file_name"] for item in listed["results"]} == {"lone knight.zip", "lone horse.zip"}
    assert {item["collection_rule"] for item in listed["results"]} == {"operator"}

    ship = grouped["ship hull.zip"].collection
    merged = api.post(f"/api/collections/{ship.pk}/merge/", {"into": knights.pk}, format="json")
    assert merged.status_code == 200 and merged.json()["package_count"] == 4
    assert not Collection.objects.filter(pk=ship.pk).exists()
    # Each package keeps the rule that grouped it.
    assert Package.objects.get(file_name="ship hull.zip").collection_rule == "album"
    itself = api.post(f"/api/collections/{knights.pk}/merge/", {"into": knights.pk}, format="json")
    assert itself.status_code == 400 and "another collection" in itself.json()["message"]
    nowhere = api.post(f"/api/collections/{knights.pk}/merge/", {"into": 999999}, format="json")
    assert nowhere.status_code == 400 and "No collection with id 999999" in nowhere.json()["message"]

    dissolved = api.post(f"/api/collections/{knights.pk}/dissolve/")
    assert dissolved.json()["packages"] == 4
    assert not Package.objects.filter(file_name__in=["lone knight.zip", "ship hull.zip"], collection__isnull=False)

    unknown = api.post("/api/collections/", {"name": "X", "packages": [knight.pk, 999999]}, format="json")
    assert unknown.status_code == 400 and "999999" in unknown.json()["message"]


def test_a_dissolved_collection_is_not_regrouped_when_a_new_version_arrives(api, grouped, settings):
    dragon = grouped["Red-Dragon_v1.zip"].collection
    api.post(f"/api/collections/{dragon.pk}/dissolve/")
    World(settings.SANDBOX_PATH).message_post(SOURCE, document=zip_of("red dragon v4.zip"), topic=42)
    # Posted now: far outside the world's 2024 dates, so only the dismissed flag could matter if it were near.
    Package.objects.filter(file_name__in=["Red-Dragon_v1.zip", "red dragon v2.zip"]).update(source_posted_at=None)
    assert run_cycle().ingested == 1
    assert Package.objects.get(file_name="red dragon v4.zip").collection is None
    assert Package.objects.filter(grouping_dismissed=True).count() == 2


def test_collection_pages_show_the_rule_and_keep_bad_input(client, admin_user, grouped):
    client.force_login(admin_user)
    tower = grouped["tower base.zip"].collection
    listing = client.get(reverse("packages:collections")).content.decode()
    assert '<span class="package-card-name">tower</span>' in listing and "Replies to one another" in listing
    page = client.get(reverse("packages:collection", args=[tower.pk])).content.decode()
    assert "tower roof.zip" in page and "— Replies to one another" in page

    refused = client.post(reverse("packages:collection-edit", args=[tower.pk]), {"name": ""})
    assert refused.status_code == 400 and "Give the collection a name." in refused.content.decode()
    for into in ("", "x", "99999999999999999999999"):
        bad = client.post(reverse("packages:collection-edit", args=[tower.pk]), {"into": into})
        assert bad.status_code == 400 and "Choose a collection to merge into." in bad.content.decode()
    renamed = client.post(reverse("packages:collection-edit", args=[tower.pk]), {"name": "Tower set"})
    assert renamed.status_code == 302
    tower.refresh_from_db()
    assert tower.name == "Tower set"

    package = grouped["lone knight.zip"]
    detail = client.get(reverse("packages:detail", args=[package.pk])).content.decode()
    assert "In no collection." in detail
    client.post(reverse("packages:collect", args=[package.pk]), {"collection": tower.pk})
    package.refresh_from_db()
    assert (package.collection, package.collection_rule) == (tower, "operator")
    detail = client.get(reverse("packages:detail", args=[package.pk])).content.decode()
    assert "Grouped because: Put together by an operator" in detail

    dissolved = client.post(
        reverse("packages:collection-edit", args=[tower.pk]), {"dissolve": "1"}, HTTP_HX_REQUEST="true"
    )
    assert dissolved["HX-Redirect"] == reverse("packages:collections")
    assert not Collection.objects.filter(pk=tower.pk).exists()


def test_a_viewer_cannot_change_collections(client, django_user_model, grouped):
    viewer = django_user_model.objects.create_user("viewer", password="x")
    client.force_login(viewer)
    tower = grouped["tower base.zip"].collection
    assert client.post(reverse("packages:collection-edit", args=[tower.pk]), {"name": "Mine"}).status_code == 403
    page = client.get(reverse("packages:collection", args=[tower.pk])).content.decode()
    assert "Dissolve" not in page
