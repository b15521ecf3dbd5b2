"""Every host sweeps its own staging, whatever queues its worker takes."""

import os
import signal
import subprocess
import sys
import time

import pytest
from django.conf import settings
from django.db import connection

from accounts.models import TelegramAccount
from core.models import RunStatus
from ingestion.models import IngestionRun

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]


def test_a_worker_on_the_ingest_queue_alone_sweeps_its_staging_at_start_and_then_on_a_timer(tmp_path):
    account = TelegramAccount.objects.create(phone="+15550000077")
    staging = tmp_path / "staging"
    left = staging / f"run-{IngestionRun.objects.create(account=account, status=RunStatus.FAILED).pk}"
    left.mkdir(parents=True)
    (left / "volume.zip").write_bytes(b"x" * 1000)
    database = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
        "SANDBOX_PATH": str(settings.SANDBOX_PATH),
        "INGEST_STAGING_DIR": str(staging),
        "INGEST_STAGING_SWEEP_SECONDS": "1",
    }
    with open(tmp_path / "worker.log", "w") as log:
        worker = subprocess.Popen(
            [sys.executable, "-m", "celery", "-A", "config.celery_app", "worker", "-Q", "ingest", "--concurrency", "1"]
            + ["--hostname", "sweeper@%h", "--without-mingle", "--without-gossip", "-l", "warning"],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
    try:
        _wait_gone(left, timeout=60)
        later = staging / f"run-{IngestionRun.objects.create(account=account, status=RunStatus.SUCCESS).pk}"
        later.mkdir()
        _wait_gone(later, timeout=10)  # the timer, not only the start
    finally:
        os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)


def _wait_gone(folder, *, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while folder.exists():
        assert time.monotonic() < deadline, f"{folder} was not swept"
        time.sleep(0.2)
