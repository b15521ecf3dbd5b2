"""The catalog audit: every package's destination messages exist, every destination document is a package,
and how far each source was scanned; results and repairs on the Operations page."""

import pytest
from django.core.management import call_command
from django.test import override_settings
from django.urls import reverse

from core.models import Notification
from ingestion.audit import CATALOG_AUDIT_PROBLEMS, catalog_audit_repair_missing, catalog_audit_run
from ingestion.models import CatalogAudit, Channel, SkipReason
from packages.models import Package
from tests.support.ingestion import DESTINATION, run_cycle, uploads, world, world_authorize_load

pytestmark = pytest.mark.django_db

MESSAGES = [
    {"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}},
    {"id": 12, "document": {"name": "castle.zip", "archive": [{"path": "castle/gate.stl", "size": 900}]}},
    {"id": 13, "document": {"name": "huge.zip", "size": 5000, "seed": 1}},
]


MAX_PACKAGE_BYTES = 4000  # huge.zip is skipped: a gap in the scanned range


@pytest.fixture(autouse=True)
def storage(storage, settings):
    settings.INGEST_MAX_PACKAGE_BYTES = MAX_PACKAGE_BYTES


def build_once() -> None:
    with override_settings(INGEST_MAX_PACKAGE_BYTES=MAX_PACKAGE_BYTES):
        world_authorize_load(world(messages=MESSAGES))
        run = run_cycle()
    assert run.ingested == 2, run.error


@pytest.fixture
def ingested(built_copy):
    """Two packages ingested and one skipped (once for the module)."""


def test_an_audit_of_a_sound_catalog_finds_nothing_and_shows_coverage(ingested):
    audit = catalog_audit_run()

    assert (audit.packages_checked, audit.documents_checked) == (2, 2)
    assert (audit.missing, audit.orphans, audit.error) == ([], [], "")
    [row] = audit.coverage
    assert (row["title"], row["scanned_through"], row["topic_id"]) == ("Models A", 13, None)
    assert row["last_scan"] is not None
    assert row["gaps"] == [{"message_id": 13, "file_name": "huge.zip", "reason": SkipReason.SIZE_LIMIT}]
    assert not Notification.objects.filter(type=CATALOG_AUDIT_PROBLEMS).exists()


def test_both_ways_problems_are_found_notified_and_repaired(ingested):
    dragon = Package.objects.get(file_name="dragon.zip")
    call_command("sandbox_delete", str(DESTINATION), str(dragon.dest_message_ids[0]))
    call_command("sandbox_post", str(DESTINATION), "--document", "stray.zip", "--size", "100", "--seed", "1")

    audit = catalog_audit_run()

    assert audit.missing == [{"package": dragon.pk, "file_name": "dragon.zip", "message_ids": dragon.dest_message_ids}]
    assert [(o["name"], o["content_hash"]) for o in audit.orphans] == [("stray.zip", "")]
    note = Notification.objects.get(type=CATALOG_AUDIT_PROBLEMS)
    assert note.severity == "error" and "dragon.zip" in note.message and "1 destination documents" in note.message

    assert catalog_audit_repair_missing(audit=audit) == 1
    assert Package.objects.get(pk=dragon.pk).reupload_needed
    run_cycle()
    again = catalog_audit_run()
    assert again.missing == [] and [o["name"] for o in again.orphans] == ["stray.zip"]
    assert sum(1 for m in uploads() if m["document"]["name"] == "dragon.zip") == 1


def test_a_package_in_the_destination_but_not_the_catalog_is_an_orphan_with_its_line(ingested):
    castle = Package.objects.get(file_name="castle.zip")
    Package.objects.filter(pk=castle.pk).delete()

    audit = catalog_audit_run()

    assert [(o["name"], o["content_hash"]) for o in audit.orphans] == [("castle.zip", castle.content_hash)]


def test_without_a_destination_the_audit_says_what_to_do(ingested):
    Channel.objects.filter(is_destination=True).update(is_destination=False)

    audit = catalog_audit_run()

    assert "No destination channel is set" in audit.error
    assert Notification.objects.get(type=CATALOG_AUDIT_PROBLEMS).severity == "error"


def test_the_operations_page_shows_the_audit_and_its_repairs(
    ingested, admin_client, django_capture_on_commit_callbacks
):
    dragon = Package.objects.get(file_name="dragon.zip")
    call_command("sandbox_delete", str(DESTINATION), str(dragon.dest_message_ids[0]))
    audit = catalog_audit_run()

    page = admin_client.get(reverse("operations")).content.decode()

    assert 'id="catalog-audit"' in page and "1 package without its destination messages" in page
    assert reverse("ingestion:catalog-repair-missing", args=[audit.pk]) in page
    assert "messages 1–13" in page and "huge.zip" in page
    with django_capture_on_commit_callbacks(execute=False) as queued:
        answer = admin_client.post(reverse("ingestion:catalog-audit"), follow=True)
    assert len(queued) == 1 and "Audit queued" in answer.content.decode()
    with django_capture_on_commit_callbacks(execute=False) as queued:
        admin_client.post(reverse("ingestion:catalog-rebuild"))
    assert len(queued) == 1
    answer = admin_client.post(reverse("ingestion:catalog-repair-missing", args=[audit.pk]), follow=True)
    assert "1 package will be uploaded again" in answer.content.decode()
    assert CatalogAudit.objects.count() == 1


def test_the_api_lists_audits_queues_one_repairs_and_rebuilds(ingested, api, django_capture_on_commit_callbacks):
    dragon = Package.objects.get(file_name="dragon.zip")
    call_command("sandbox_delete", str(DESTINATION), str(dragon.dest_message_ids[0]))
    audit = catalog_audit_run()

    listed = api.get("/api/catalog-audits/").json()
    assert listed["results"][0]["missing"][0]["file_name"] == "dragon.zip"
    with django_capture_on_commit_callbacks(execute=False) as queued:
        assert api.post("/api/catalog-audits/").status_code == 202
        assert api.post("/api/catalog/rebuild/").status_code == 202
    assert len(queued) == 2
    repaired = api.post(f"/api/catalog-audits/{audit.pk}/repair-missing/")
    assert repaired.status_code == 200 and repaired.json()["packages"] == 1
    catalog_audit_run()
    stale = api.post(f"/api/catalog-audits/{audit.pk}/repair-missing/")
    assert stale.status_code == 409 and "newer audit" in stale.json()["message"]
    Channel.objects.filter(is_destination=True).update(is_destination=False)
    assert api.post("/api/catalog/rebuild/").status_code == 409
