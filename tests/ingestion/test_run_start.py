"""An ingestion run starts like every engine (core.engine.run_engine_start): its account's lock first, then the
claim, or the take-over of a run whose worker is surely gone. A run whose account another run holds waits, and
its task tries again later: it does not fail."""

import io
import socket
import subprocess
import sys
from datetime import timedelta

import pytest
from celery.exceptions import Retry
from django.core.management import call_command
from django.utils import timezone

from accounts.models import TelegramAccount
from core.locks import ACCOUNT, FANOUT_ACCOUNT
from core.models import RunStatus
from core.outcomes import Outcome
from ingestion import services as ingestion_services
from ingestion.management.commands import ingest as ingest_command
from ingestion.models import IngestionRun
from ingestion.tasks import ingestion_run_execute
from packages.models import Package
from telegram.sandbox.faults import SandboxCrash
from tests.support.ingestion import ARCHIVES, READER, held_elsewhere, uploads, world

pytestmark = pytest.mark.django_db


def _queued() -> IngestionRun:
    return IngestionRun.objects.create(account=TelegramAccount.objects.get(phone=READER), trigger="manual")


def test_a_run_whose_account_is_busy_is_tried_again_later_not_failed(ingest_world):
    ingest_world(world(messages=ARCHIVES[:2]))
    run = _queued()

    with held_elsewhere(ACCOUNT, str(run.account_id)):  # another worker's run of this account
        for _ in range(2):  # at-least-once delivery: the task arrives twice while the account is busy
            with pytest.raises(Retry):
                ingestion_run_execute(run.pk)
        run.refresh_from_db()
        assert (run.status, run.worker_id, run.error) == (RunStatus.QUEUED, "", ""), "nothing was claimed"
        assert run.outcome.key == Outcome.WAITING
        assert not uploads()

    assert ingestion_run_execute(run.pk) == RunStatus.SUCCESS
    assert ingestion_run_execute(run.pk) is None, "a later delivery finds nothing left to do"
    run.refresh_from_db()
    assert (run.status, run.ingested) == (RunStatus.SUCCESS, 1), run.error
    assert len(uploads()) == 1 == Package.objects.count()


def test_ingestion_and_sending_keep_their_own_account_locks(ingest_world):
    # A reminder run or a package send of the same account does not hold up its ingestion (they share the
    # Telegram session at set boundaries instead).
    ingest_world(world(messages=ARCHIVES[:2]))
    run = _queued()

    with held_elsewhere(FANOUT_ACCOUNT, str(run.account_id)):
        assert ingestion_run_execute(run.pk) == RunStatus.SUCCESS


def _gone_worker() -> str:
    """The worker_id of a process of this host that has ended."""
    ended = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return f"{socket.gethostname()}-{ended.stdout.strip()}-1"


def test_a_run_whose_worker_died_is_taken_over_by_the_next_delivery(ingest_world, monkeypatch):
    ingest_world(world(messages=ARCHIVES[:2]))
    run = _queued()
    record = ingestion_services.archive_set_record_upload

    def dying(*args, **kwargs):
        raise SandboxCrash("killed after the upload, before the stub")

    monkeypatch.setattr(ingestion_services, "archive_set_record_upload", dying)
    with pytest.raises(SandboxCrash):
        ingestion_run_execute(run.pk)
    monkeypatch.setattr(ingestion_services, "archive_set_record_upload", record)
    # The worker's process is gone and its heartbeat went quiet: nobody holds the run but its row.
    quiet = timezone.now() - timedelta(minutes=5)
    IngestionRun.objects.filter(pk=run.pk).update(worker_id=_gone_worker(), heartbeat_at=quiet)
    assert IngestionRun.objects.get(pk=run.pk).status == RunStatus.RUNNING

    assert ingestion_run_execute(run.pk) == RunStatus.SUCCESS, "the redelivered task takes the run over"

    run.refresh_from_db()
    assert (run.status, run.ingested, run.requeue_count) == (RunStatus.SUCCESS, 1, 1), run.error
    assert len(uploads()) == 1, "the upload retried by the new worker carried the same random_id"
    assert Package.objects.get().dest_message_ids == [uploads()[0]["id"]]


def test_a_run_still_held_by_a_live_worker_is_not_taken_over(ingest_world, settings):
    # Its lock went (a database restart) but its worker is alive and beating: it stops at its next heartbeat.
    ingest_world(world(messages=ARCHIVES[:2]))
    run = _queued()
    live = f"{socket.gethostname()}-1-1"  # pid 1 never ends
    IngestionRun.objects.filter(pk=run.pk).update(
        status=RunStatus.RUNNING, worker_id=live, claimed_at=timezone.now(), heartbeat_at=timezone.now()
    )

    with pytest.raises(Retry):
        ingestion_run_execute(run.pk)

    run.refresh_from_db()
    assert (run.status, run.worker_id, run.requeue_count) == (RunStatus.RUNNING, live, 0)
    assert not uploads()


def _ingest() -> str:
    out = io.StringIO()
    call_command("ingest", "--account", READER, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_the_ingest_command_starts_its_run_the_same_way(ingest_world, monkeypatch):
    ingest_world(world(messages=ARCHIVES[:2]))
    account = TelegramAccount.objects.get(phone=READER)
    sent = []
    monkeypatch.setattr(ingest_command, "ingestion_run_enqueue", sent.append)

    with held_elsewhere(ACCOUNT, str(account.pk)):
        busy = _ingest()
    run = IngestionRun.objects.get(account=account)
    assert f"the account is busy elsewhere; run #{run.pk} is queued" in busy
    assert (run.status, sent) == (RunStatus.QUEUED, [run.pk]), "handed to the workers, not left behind"

    done = _ingest()  # the queued run is the account's open run: the command works it here

    run.refresh_from_db()
    assert (run.status, run.ingested) == (RunStatus.SUCCESS, 1), run.error
    assert f"{account}: success — 1 ingested" in done
