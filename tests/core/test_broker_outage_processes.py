"""A worker whose Redis goes away while a task runs reconnects and goes on taking tasks: kombu's restore of the
running task's message on a lost connection no longer stops it (config/celery_transport.py)."""

import subprocess
import sys
import time
import uuid
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.conf import settings

from config.celery_app import app
from config.celery_transport import Transport
from tests.claimtest.models import ProbeRun
from tests.support.processes import Gate, purge_queues, stop, wait_for, worker_env

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]


def _nap(seconds: float, note: str) -> None:
    app.send_task("tests.claimtest.tasks.probe_nap", args=[seconds, note], queue="default")


def test_redis_cut_under_a_running_task_the_worker_reconnects_and_takes_the_next_task(tmp_path):
    purge_queues()
    broker = urlsplit(settings.REDIS_URL)
    gate = Gate((broker.hostname, broker.port))  # the worker reaches Redis through it; this test does not
    gated = urlunsplit(broker._replace(netloc=broker.netloc.replace(f":{broker.port}", f":{gate.port}")))
    log = tmp_path / "worker.log"
    # As the Procfile starts it: with events, gossip and mingle, whose broadcast connection notices first.
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config.celery_app", "worker", "-Q", "default", "-c", "1", "-E"],
        cwd=settings.BASE_DIR,
        env=worker_env(TEST_REDIS_URL=gated),
        stdout=subprocess.DEVNULL,
        stderr=log.open("a"),
        start_new_session=True,
    )
    try:
        wait_for(lambda: "ready." in log.read_text(), timeout=60, what="the worker")
        _nap(6, "running when Redis went")
        wait_for(lambda: "probe_nap" in log.read_text(), timeout=30, what="the task to start")

        gate.close()
        wait_for(lambda: "Connection to broker lost" in log.read_text(), timeout=30, what="the lost connection")
        time.sleep(3)  # down while the worker closes its channel and gives the running task's message back
        gate.open()
        wait_for(
            lambda: ProbeRun.objects.filter(worker_id="running when Redis went").exists(), timeout=60, what="the task"
        )
        _nap(0, "sent after Redis came back")

        wait_for(
            lambda: ProbeRun.objects.filter(worker_id="sent after Redis came back").exists(),
            timeout=60,
            what=f"the next task taken by the same worker:\n{log.read_text()[-3000:]}",
        )
        assert worker.poll() is None
        assert "Unrecoverable error" not in log.read_text()
    finally:
        gate.close()
        stop(worker)


def test_the_broker_is_redis_to_its_readers_and_the_guarded_transport_to_kombu():
    with app.connection_for_write() as connection:
        assert connection.as_uri().startswith("redis://"), "Flower picks its broker reader by this scheme"
        assert isinstance(connection.transport, Transport)


def test_a_channel_closed_after_its_connection_with_a_task_unacknowledged_closes_quietly():
    # The state kombu's own transport fails in: the connection's client already released when the consumer's
    # channel is closed, one message delivered and not acknowledged (a task acknowledged late, still running).
    with app.connection_for_write() as connection:
        queue = connection.SimpleQueue(f"test-unacked-{uuid.uuid4().hex}")
        queue.put({"task": "still running"})
        queue.get(timeout=5)  # delivered, not acknowledged
        channel = queue.channel
        channel._pool = None
        connection.transport.client = None

        channel.close()

        assert channel.qos._delivered == {}
