"""Every host sweeps its own staging, whatever queues its worker takes."""

import time

import pytest

from accounts.models import TelegramAccount
from core.models import RunStatus
from ingestion.models import IngestionRun
from tests.support.processes import start_celery_worker, stop

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]


def test_a_worker_on_the_ingest_queue_alone_sweeps_its_staging_at_start_and_then_on_a_timer(tmp_path):
    account = TelegramAccount.objects.create(phone="+15550000077")
    staging = tmp_path / "staging"
    left = staging / f"run-{IngestionRun.objects.create(account=account, status=RunStatus.FAILED).pk}"
    left.mkdir(parents=True)
    (left / "volume.zip").write_bytes(b"x" * 1000)
    worker = start_celery_worker(
        tmp_path,
        queues="ingest",
        name="sweeper",
        level="warning",
        INGEST_STAGING_DIR=str(staging),
        INGEST_STAGING_SWEEP_SECONDS="1",
    )
    try:
        _wait_gone(left, timeout=60)
        later = staging / f"run-{IngestionRun.objects.create(account=account, status=RunStatus.SUCCESS).pk}"
        later.mkdir()
        _wait_gone(later, timeout=10)  # the timer, not only the start
    finally:
        stop(worker)


def _wait_gone(folder, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while folder.exists():
        assert time.monotonic() < deadline, f"{folder} was not swept"
        time.sleep(0.2)
