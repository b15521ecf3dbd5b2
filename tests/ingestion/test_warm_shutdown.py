"""A worker stopped warmly (SIGTERM, as `docker stop` sends it) hands its run back at once."""

import os
import signal
import time

import pytest

from accounts.models import TelegramAccount
from core.models import RunStatus
from ingestion.models import IngestionRun
from ingestion.tasks import ingestion_run_execute
from packages.models import Package
from telegram.sandbox.world import World
from tests.support.ingestion import DESTINATION, READER, WRITER, world
from tests.support.processes import purge_queues, start_celery_worker, wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]


def _worker(tmp_path, name: str):
    return start_celery_worker(
        tmp_path, queues="ingest", name=name, INGEST_STAGING_DIR=str(tmp_path / f"staging-{name}")
    )


def test_sigterm_lets_the_part_finish_then_hands_the_run_back_at_once(ingest_world, tmp_path):
    messages = [{"id": 11, "document": {"name": "slow.bin.zip", "size": 6_000_000, "seed": 3}}]
    accounts = [
        {"phone": READER, "first_name": "Reader A", "code": "12345", "bandwidth_bytes_per_s": 300_000},
        {"phone": WRITER, "first_name": "Writer", "code": "12345"},
    ]
    loaded: World = ingest_world(world(messages=messages, accounts=accounts))
    purge_queues()
    run = IngestionRun.objects.create(account=TelegramAccount.objects.get(phone=READER), trigger="manual")
    ingestion_run_execute.apply_async(args=[run.pk])
    first = _worker(tmp_path, "first")
    try:
        wait_for(
            lambda: loaded.stats()["calls"].get(READER, {}).get("upload.getFile", 0) >= 1,
            timeout=60,
            what="the download did not start",
        )
        os.kill(first.pid, signal.SIGTERM)  # the main process only, as `docker stop` does
        stopped = time.monotonic()
        wait_for(
            lambda: IngestionRun.objects.get(pk=run.pk).status == RunStatus.QUEUED,
            timeout=10,
            what="the run was not handed back at once (it would have waited for the reaper)",
        )
        assert time.monotonic() - stopped < 10
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
    run.refresh_from_db()
    assert run.error.startswith("Interrupted: The worker is shutting down"), run.error

    second = _worker(tmp_path, "second")  # the task sent again at the hand-back is taken by another worker
    try:
        wait_for(lambda: IngestionRun.objects.get(pk=run.pk).is_over, timeout=120, what="the run was not taken up")
    finally:
        os.killpg(second.pid, signal.SIGTERM)
        second.wait(timeout=30)
        purge_queues()
    assert IngestionRun.objects.get(pk=run.pk).status == RunStatus.SUCCESS
    documents = [m for m in loaded.chat_dump(DESTINATION)["messages"] if m["document"]]
    assert len(documents) == 1 == Package.objects.count()
