"""Ingestion at Telegram's time scales: transfers slower than the claim's stale threshold."""

import time
from datetime import timedelta

import pytest

from core.runs import runs_reap
from ingestion.models import IngestionRun
from packages.models import Package
from tests.support.ingestion import READER, uploads, world
from tests.support.processes import start_program

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

STALE_AFTER = 3


def test_an_upload_lasting_several_stale_thresholds_keeps_its_claim(ingest_world, tmp_path):
    # 1.5 MB at 150 kB/s: the upload alone takes ~10 s, over three stale thresholds, with no progress tick.
    data = world(messages=[{"id": 10, "document": {"name": "slow.zip", "size": 1_500_000, "seed": 3}}])
    data["network"] = {"rtt_ms": 80, "connection_bytes_per_s": 150_000}
    ingest_world(data)

    worker = start_program(["manage.py", "ingest", "--once", "--account", READER], WORK_HEARTBEAT_SECONDS="1")
    reaped = []
    while worker.poll() is None:  # the reaper runs as beat would, only far more often
        reaped.append(runs_reap(model=IngestionRun, stale_after=timedelta(seconds=STALE_AFTER), max_requeues=3))
        time.sleep(0.5)
    out, err = worker.communicate()
    assert worker.returncode == 0, err[-3000:]

    run = IngestionRun.objects.get()
    assert (run.status, run.requeue_count, run.ingested) == ("success", 0, 1), (out, run.error)
    assert not any(report.requeued or report.failed for report in reaped)
    assert [message["document"]["name"] for message in uploads()] == ["slow.zip"], "one upload"
    assert Package.objects.count() == 1
