"""The process dies at the worst moments; after a restart nothing is uploaded twice."""

from datetime import timedelta

import pytest

from core.models import RunStatus
from ingestion import services as ingestion_services
from ingestion.models import IngestionRun
from ingestion.recovery import stubs_backfill
from packages import services as package_services
from packages.models import MetadataStatus, Package
from telegram.sandbox.faults import SandboxCrash
from tests.support.ingestion import ARCHIVES, run_cycle, uploads, world

pytestmark = pytest.mark.django_db


def crash_once(monkeypatch, owner, name):
    original = getattr(owner, name)
    calls = []

    def dying(*args, **kwargs):
        if not calls:
            calls.append(1)
            raise SandboxCrash(f"killed in {name}")
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, dying)


def restart():
    """What the reaper does for a run whose worker died: it is over, a new cycle starts."""
    IngestionRun.objects.filter(status=RunStatus.RUNNING).update(status=RunStatus.FAILED)


def test_crash_after_the_upload_before_the_stub(ingest_world, monkeypatch):
    ingest_world(world(messages=ARCHIVES[:2]))
    crash_once(monkeypatch, ingestion_services, "archive_set_record_upload")

    with pytest.raises(SandboxCrash):
        run_cycle()
    assert len(uploads()) == 1 and not Package.objects.exists()

    restart()
    run = run_cycle()

    assert run.ingested == 1
    assert len(uploads()) == 1, "the retried upload carried the same random_id and was not posted again"
    package = Package.objects.get()
    assert package.dest_message_ids == [uploads()[0]["id"]]
    assert package.metadata_status == MetadataStatus.COMPLETE


def test_crash_after_the_stub_before_the_metadata(ingest_world, monkeypatch):
    ingest_world(world(messages=ARCHIVES[:2]))
    crash_once(monkeypatch, package_services, "package_metadata_fill")

    with pytest.raises(SandboxCrash):
        run_cycle()
    stub = Package.objects.get()
    assert stub.metadata_status == MetadataStatus.PENDING and stub.dest_message_ids

    restart()
    run = run_cycle()
    assert (run.ingested, run.duplicates) == (0, 1)
    assert len(uploads()) == 1

    assert stubs_backfill(older_than=timedelta(0)) == 1
    stub.refresh_from_db()
    assert stub.metadata_status == MetadataStatus.COMPLETE
    assert stub.files.get().path == "dragon/body.stl"
