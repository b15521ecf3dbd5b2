"""Ingestion runs through real Celery worker processes: claimed and worked exactly once."""

import time

import pytest

from accounts.models import TelegramAccount
from core.models import RunStatus
from ingestion.models import IngestionRun
from ingestion.tasks import ingestion_run_execute
from packages.models import Package
from tests.support.ingestion import DESTINATION, WRITER, uploaded_names, wait_until_over
from tests.support.processes import purge_queues, start_workers, stop_workers

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
        INGEST_ACCOUNT_BUSY_RETRY_SECONDS="1",
    )
    try:
        wait_until_over([run.pk for run in runs])
        time.sleep(3)  # let redeliveries (tried again while the account was busy) find nothing left to do
    finally:
        stop_workers(pool)

    for run in IngestionRun.objects.filter(pk__in=[run.pk for run in runs]):
        assert (run.status, run.ingested) == (RunStatus.SUCCESS, 1), run.error
    names = uploaded_names()
    assert len(names) == len(set(names)), "nothing uploaded twice"
    assert {"model-0.zip", "model-1.zip"} <= set(names)
    logs = "".join(path.read_text() for path in tmp_path.glob("worker*.log"))
    assert "its account is busy with another run" in logs, "the task was redelivered while it ran"
