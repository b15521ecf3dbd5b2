"""Ingestion runs through real Celery worker processes: claimed and worked exactly once."""

import io
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection

from accounts.models import TelegramAccount
from core.models import RunStatus
from ingestion.models import IngestionRun
from ingestion.tasks import ingestion_run_execute
from packages.models import Package
from tests.ingestion.conftest import DESTINATION, WRITER

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

ACCOUNTS = 6


def many_readers_world(*, bandwidth=None):
    readers = [f"+1555000010{n}" for n in range(ACCOUNTS)]
    accounts = [
        {"phone": p, "first_name": f"Reader {n}", "code": "12345", "bandwidth_bytes_per_s": bandwidth}
        for n, p in enumerate(readers)
    ]
    accounts.append({"phone": WRITER, "first_name": "Writer", "code": "12345"})
    chats = [
        {
            "id": 1100 + n,
            "title": f"Source {n}",
            "type": "channel",
            "role": "source",
            "members": [phone],
            "messages": [
                {
                    "id": 5,
                    "document": {"name": f"model-{n}.zip", "archive": [{"path": f"m{n}.stl", "size": 600_000 + n}]},
                }
            ],
        }
        for n, phone in enumerate(readers)
    ]
    chats.append(
        {
            "id": DESTINATION,
            "title": "Archive",
            "type": "channel",
            "role": "destination",
            "members": [WRITER],
            "admins": [WRITER],
        }
    )
    return {"accounts": accounts, "chats": chats}


def start_workers(count: int, tmp_path, level="warning", **extra_env):
    database = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
        "SANDBOX_PATH": str(settings.SANDBOX_PATH),
        "MEDIA_ROOT": str(tmp_path / "media"),
        "INGEST_STAGING_DIR": str(tmp_path / "staging"),
        **extra_env,
    }
    return [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config.celery_app",
                "worker",
                "-Q",
                "ingest,default",
                "--concurrency",
                "1",
                "--hostname",
                f"test{n}@%h",
                "--without-mingle",
                "--without-gossip",
                "-l",
                level,
            ],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=open(tmp_path / f"worker{n}.log", "w"),
            start_new_session=True,
        )
        for n in range(count)
    ]


def stop_workers(workers):
    for worker in workers:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
    for worker in workers:
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)


def wait_until_over(run_ids, timeout=180):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (
            not IngestionRun.objects.filter(pk__in=run_ids)
            .exclude(status__in=[RunStatus.SUCCESS, RunStatus.PARTIAL, RunStatus.FAILED])
            .exists()
        ):
            return
        time.sleep(0.3)
    raise AssertionError(f"runs still open: {list(IngestionRun.objects.filter(pk__in=run_ids).values('pk', 'status'))}")


def purge_queues():
    from config.celery_app import app

    with app.connection_for_write() as conn:
        for queue in ("ingest", "default", "fanout"):
            conn.default_channel.client.delete(queue)


def uploaded_names():
    out = io.StringIO()
    call_command("sandbox_dump", str(DESTINATION), "--json", stdout=out)
    return [m["document"]["name"] for m in json.loads(out.getvalue())["messages"] if m["document"]]


@pytest.mark.parametrize("workers", [2, 4])
def test_every_run_is_claimed_and_worked_once_even_when_delivered_twice(ingest_world, tmp_path, workers):
    ingest_world(many_readers_world())
    purge_queues()
    runs = [
        IngestionRun.objects.create(account=account, trigger="manual")
        for account in TelegramAccount.objects.exclude(phone=WRITER)
    ]
    for run in runs:
        for _ in range(2):  # at-least-once delivery: every task arrives twice
            ingestion_run_execute.apply_async(args=[run.pk])
    pool = start_workers(workers, tmp_path)
    try:
        wait_until_over([run.pk for run in runs])
    finally:
        stop_workers(pool)

    for run in IngestionRun.objects.filter(pk__in=[run.pk for run in runs]):
        assert (run.status, run.ingested) == (RunStatus.SUCCESS, 1), run.error
        assert run.worker_id
    assert sorted(uploaded_names()) == sorted(f"model-{n}.zip" for n in range(ACCOUNTS))
    assert Package.objects.count() == ACCOUNTS
    assert len({run.worker_id for run in IngestionRun.objects.filter(pk__in=[r.pk for r in runs])}) > 1


def test_a_task_redelivered_while_its_first_copy_runs_does_no_work_twice(ingest_world, tmp_path):
    # Slow downloads (about 3 s a run) and a 1 s visibility timeout: Redis hands the task out again mid-run.
    ingest_world(many_readers_world(bandwidth=200_000))
    purge_queues()
    runs = [
        IngestionRun.objects.create(account=account, trigger="manual")
        for account in TelegramAccount.objects.exclude(phone=WRITER)[:2]
    ]
    for run in runs:
        ingestion_run_execute.apply_async(args=[run.pk])
    pool = start_workers(
        3,
        tmp_path,
        level="info",
        CELERY_VISIBILITY_TIMEOUT="1",
        CELERY_UNACKED_RESTORE_INTERVAL="1",
        CELERY_UNACKED_RESTORE_THROTTLE="1",
    )
    try:
        wait_until_over([run.pk for run in runs])
        time.sleep(3)  # let redeliveries arrive and find nothing to claim
    finally:
        stop_workers(pool)

    for run in IngestionRun.objects.filter(pk__in=[run.pk for run in runs]):
        assert (run.status, run.ingested) == (RunStatus.SUCCESS, 1), run.error
    names = uploaded_names()
    assert len(names) == len(set(names)), "nothing uploaded twice"
    assert {"model-0.zip", "model-1.zip"} <= set(names)
    logs = "".join(path.read_text() for path in tmp_path.glob("worker*.log"))
    assert "is not queued (another delivery has it)" in logs, "the task was redelivered while it ran"
