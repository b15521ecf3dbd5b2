"""What comes back after the faults the chaos bench (bench/chaos.py) injects: the S3 test server, stopped and
started again on its port, serves the objects written before; beat, SIGKILLed and started again, reaps silent
runs at the pace RUNS_REAP_EVERY_SECONDS sets."""

import os
import signal
import time
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
from botocore.exceptions import EndpointConnectionError
from django.utils import timezone

from config import devstack
from config.storage import object_store_parse
from core import task_names
from core.models import RunStatus
from ingestion.models import IngestionRun
from tests.support import factories
from tests.support.processes import purge_queues, start_beat, start_celery_worker, stop, wait_for


@pytest.mark.processes
def test_the_s3_server_stopped_and_started_again_serves_the_same_objects_on_the_same_endpoint(tmp_path):
    server = devstack.TestObjectStore(tmp_path / "s3.log", data=tmp_path / "buckets.pickle")
    server.start()
    server.wait_ready()
    try:
        endpoint = server.endpoint
        store = object_store_parse(f"s3+http://key:secret@{urlsplit(endpoint).netloc}/kept-here?region=us-east-1")
        client = store.client(retries={"max_attempts": 1}, connect_timeout=2)
        client.create_bucket(Bucket="kept-here")
        volume = os.urandom(3_000_000)
        client.put_object(Bucket="kept-here", Key="raw/set.7z.001", Body=volume)
        client.put_object(Bucket="kept-here", Key="raw/model.zip", Body=b"zip")

        server.stop()
        assert not devstack._port_busy(server.port)
        with pytest.raises(EndpointConnectionError):
            client.head_object(Bucket="kept-here", Key="raw/model.zip")

        server.start()
        server.wait_ready()
        assert server.endpoint == endpoint
        assert client.get_object(Bucket="kept-here", Key="raw/set.7z.001")["Body"].read() == volume
        listed = client.list_objects_v2(Bucket="kept-here")["Contents"]
        assert sorted(item["Key"] for item in listed) == ["raw/model.zip", "raw/set.7z.001"]
    finally:
        server.stop()


def _silent_run() -> IngestionRun:
    """A run whose worker died ten minutes ago."""
    return IngestionRun.objects.create(
        account=factories.account(),
        status=RunStatus.RUNNING,
        worker_id="gone-1-1",
        heartbeat_at=timezone.now() - timedelta(minutes=10),
    )


def _requeued(run: IngestionRun) -> bool:
    run.refresh_from_db()
    return run.status == RunStatus.QUEUED and run.requeue_count == 1


def _reaps_done(log) -> bool:
    """Every reap the worker took has ended (Celery logs each task's "received" and its "succeeded"): beat's, and
    the recovery a starting worker sends itself, which a loaded worker may come to late."""
    reaps = (f"{task_names.RUNS_REAP_ALL}[", f"{task_names.INGESTION_RECOVER}[")
    lines = [line for line in log.read_text().splitlines() if any(reap in line for reap in reaps)]
    return sum(" received" in line for line in lines) == sum(" succeeded" in line for line in lines)


@pytest.mark.processes
@pytest.mark.django_db(transaction=True)
def test_beat_killed_and_started_again_reaps_at_the_pace_the_environment_sets(tmp_path):
    purge_queues()
    pace = {"RUNS_REAP_EVERY_SECONDS": "1"}  # production's is a minute: this test would wait for it
    first = _silent_run()
    worker = start_celery_worker(tmp_path, queues="default", **pace)
    beat = start_beat(tmp_path, **pace)
    try:
        wait_for(lambda: _requeued(first), timeout=45, what="beat's reaper to queue the silent run again")

        os.killpg(beat.pid, signal.SIGKILL)
        beat.wait()
        # What beat sent before it died is not "beat away": those reaps are let run out (a loaded worker lags).
        purge_queues()
        wait_for(lambda: _reaps_done(tmp_path / "worker.log"), timeout=30, what="the reaps beat sent before it died")
        second = _silent_run()
        time.sleep(3)
        second.refresh_from_db()
        assert second.status == RunStatus.RUNNING, "nothing reaps while beat is away"

        beat = start_beat(tmp_path, name="beat-again", **pace)
        wait_for(lambda: _requeued(second), timeout=45, what="the restarted beat's reaper")
    finally:
        stop(beat)
        stop(worker)
