"""Ingestion when the ground moves: PostgreSQL restarted in the middle of an upload."""

import threading
import time

import pytest

from accounts.models import TelegramAccount
from core.models import RunStatus
from ingestion import pipeline
from ingestion.models import IngestionRun
from packages.models import Package
from tests.support.ingestion import DESTINATION, READER, WRITER, world

pytestmark = pytest.mark.django_db(transaction=True)

MESSAGES = [
    {"id": 11, "document": {"name": "slow.bin.zip", "size": 1_500_000, "seed": 3}},
    {"id": 12, "document": {"name": "after.zip", "archive": [{"path": "after/body.stl", "size": 2000}]}},
]


def _cycle() -> int:
    return IngestionRun.objects.create(account=TelegramAccount.objects.get(phone=READER), trigger="command").pk


def test_a_postgres_restart_mid_upload_stops_the_cycle_and_nothing_is_lost_or_doubled(
    ingest_world, settings, postgres_restart
):
    settings.WORK_HEARTBEAT_SECONDS = 1
    data = world(
        messages=MESSAGES,
        accounts=[
            {"phone": READER, "first_name": "Reader A", "code": "12345"},
            # A slow writer: the upload takes seconds, and the restart lands in it.
            {"phone": WRITER, "first_name": "Writer", "code": "12345", "bandwidth_bytes_per_s": 300_000},
        ],
    )
    data["quirks"] = {"auth_key_duplicated": True}
    loaded = ingest_world(data)
    restarted = {}

    def restart_mid_upload():
        while loaded.stats()["calls"].get(WRITER, {}).get("upload.saveFilePart", 0) < 1:
            time.sleep(0.05)
        postgres_restart()
        restarted["at"] = time.monotonic()
        restarted["parts"] = loaded.stats()["calls"][WRITER]["upload.saveFilePart"]

    restarter = threading.Thread(target=restart_mid_upload)
    restarter.start()
    run = IngestionRun.objects.get(pk=_cycle())
    ending = pipeline.ingestion_run_execute(run_id=run.pk)
    stopped_at = time.monotonic()
    restarter.join()

    assert ending == RunStatus.QUEUED, "handed back, neither finished nor failed"
    assert stopped_at - restarted["at"] < 3, "noticed within a heartbeat period, not at the end of the upload"
    parts = loaded.stats()["calls"][WRITER]["upload.saveFilePart"]
    assert parts <= restarted["parts"] + 4, "the upload stopped: no part after the loss but those on the wire"
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and run.error.startswith("Interrupted:"), run.error

    again = pipeline.ingestion_run_execute(run_id=run.pk)

    assert again == RunStatus.SUCCESS
    documents = [m for m in loaded.chat_dump(DESTINATION)["messages"] if m["document"]]
    packages = Package.objects.all()
    assert len(documents) == 2 == packages.count(), "every set once in the destination, each with its package"
    assert {m["id"] for m in documents} == {i for p in packages for i in p.dest_message_ids}
    sessions = loaded.stats()["sessions"]
    assert sessions[READER]["duplicated"] == 0 and sessions[WRITER]["duplicated"] == 0
    assert set(TelegramAccount.objects.values_list("auth_state", flat=True)) == {"authenticated"}


@pytest.mark.django_db
def test_an_object_store_outage_is_not_charged_to_the_archive(ingest_world, settings, object_store, tmp_path):
    from config.storage import default_storage_for
    from ingestion.models import AccountChannelMap, SkippedPackage

    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"
    settings.INGEST_SKIP_RECENT_SCAN_WINDOW_SECONDS = 0
    loaded = ingest_world(world(messages=MESSAGES[1:]))
    working = settings.STORAGES["default"]
    settings.STORAGES = {**settings.STORAGES, "default": default_storage_for("s3+http://key:secret@127.0.0.1:9/down")}

    for _ in range(settings.INGEST_MAX_SKIP_ATTEMPTS + 1):  # the store stays down for more cycles than the cap
        run = pipeline.ingestion_run_execute(run_id=_cycle())
        assert run == RunStatus.PARTIAL
    last = IngestionRun.objects.latest("pk")
    assert last.error.startswith("Interrupted by an outage:"), last.error
    assert not SkippedPackage.objects.exists(), "no attempt is charged to the archive"
    watermark = AccountChannelMap.objects.get(account__phone=READER).last_processed_message_id
    assert watermark < 12, "the watermark waits below the set"

    downloads = loaded.stats()["calls"][READER]["upload.getFile"]

    settings.STORAGES = {**settings.STORAGES, "default": working}
    assert pipeline.ingestion_run_execute(run_id=_cycle()) == RunStatus.SUCCESS
    assert [m["document"]["name"] for m in loaded.chat_dump(DESTINATION)["messages"] if m["document"]] == ["after.zip"]
    assert loaded.stats()["calls"][READER]["upload.getFile"] == downloads, "the kept download is used, not fetched"
    assert not list((tmp_path / "staging" / "partial").iterdir()), "the set is taken: its kept download goes"
