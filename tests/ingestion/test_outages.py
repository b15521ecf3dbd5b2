"""Ingestion when the ground moves: PostgreSQL restarted in the middle of an upload."""

import threading
import time

import pytest

from accounts.models import TelegramAccount
from core.models import RunStatus
from core.runs import run_claim
from ingestion import pipeline
from ingestion.models import IngestionRun
from packages.models import Package
from tests.ingestion.conftest import DESTINATION, READER, WRITER, world

pytestmark = pytest.mark.django_db(transaction=True)

MESSAGES = [
    {"id": 11, "document": {"name": "slow.bin.zip", "size": 1_500_000, "seed": 3}},
    {"id": 12, "document": {"name": "after.zip", "archive": [{"path": "after/body.stl", "size": 2000}]}},
]


def _cycle() -> IngestionRun:
    run = IngestionRun.objects.create(account=TelegramAccount.objects.get(phone=READER), trigger="command")
    return run_claim(model=IngestionRun, run_id=run.pk)


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
    run = _cycle()
    ending = pipeline.ingestion_run_execute(run=run)
    stopped_at = time.monotonic()
    restarter.join()

    assert ending == RunStatus.QUEUED, "handed back, neither finished nor failed"
    assert stopped_at - restarted["at"] < 3, "noticed within a heartbeat period, not at the end of the upload"
    parts = loaded.stats()["calls"][WRITER]["upload.saveFilePart"]
    assert parts <= restarted["parts"] + 4, "the upload stopped: no part after the loss but those on the wire"
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and run.error.startswith("Interrupted:"), run.error

    again = pipeline.ingestion_run_execute(run=run_claim(model=IngestionRun, run_id=run.pk))

    assert again == RunStatus.SUCCESS
    documents = [m for m in loaded.chat_dump(DESTINATION)["messages"] if m["document"]]
    packages = Package.objects.all()
    assert len(documents) == 2 == packages.count(), "every set once in the destination, each with its package"
    assert {m["id"] for m in documents} == {i for p in packages for i in p.dest_message_ids}
    sessions = loaded.stats()["sessions"]
    assert sessions[READER]["duplicated"] == 0 and sessions[WRITER]["duplicated"] == 0
    assert set(TelegramAccount.objects.values_list("auth_state", flat=True)) == {"authenticated"}
