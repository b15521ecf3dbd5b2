"""Real OS processes for tests, started one way: Celery workers, beat, and `manage.py` or test programs, on the
test database, this test's sandbox and folders (from its settings), and this test process's Redis database (or
a Redis of the test's own)."""

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import datetime

from django.conf import settings
from django.db import connection

from reminders.models import ReminderRun
from tests.support.reminders import (
    SENDER,
    group_id,
)
from tests.support.start_line import go_when_ready

PER_MINUTE = 300  # time-scaled: 5 a second
BURST = 3


def worker_env(**extra) -> dict:
    """The environment of a process that works beside the test: its database, sandbox and folders, and the
    reminders' time-scaled pace; `extra` overrides any of them."""
    database = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": f"postgres://{database['USER']}@{database['HOST']}:{database['PORT']}/{database['NAME']}",
        "SANDBOX_PATH": str(settings.SANDBOX_PATH),
        "MEDIA_ROOT": str(settings.MEDIA_ROOT),
        "INGEST_STAGING_DIR": str(settings.INGEST_STAGING_DIR),
        "REMINDER_MAX_SEND_PER_MINUTE": str(PER_MINUTE),
        "REMINDER_SEND_BURST": str(BURST),
        "REMINDER_PART_JITTER_MIN_MS": "0",
        "REMINDER_PART_JITTER_MAX_MS": "2",
        **extra,
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)  # set for Playwright in a browser test; a worker runs without it
    return env


def start_celery_worker(
    tmp_path,
    *,
    queues: str = "fanout,default",
    concurrency: int = 1,
    name: str = "worker",
    level: str = "info",
    **extra_env,
) -> subprocess.Popen:
    """A Celery worker on `queues`, in a process group of its own (stop() ends it and its children); its log in
    tmp_path/<name>.log."""
    return subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config.celery_app", "worker", "-Q", queues]
        + ["--concurrency", str(concurrency), "--hostname", f"{name}@%h", "--without-mingle", "--without-gossip"]
        + ["-l", level],
        cwd=settings.BASE_DIR,
        env=worker_env(**extra_env),
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / f"{name}.log", "a"),
        start_new_session=True,
    )


def start_program(args: list[str], **extra_env) -> subprocess.Popen:
    """`manage.py …` or `-m tests.…` beside the test (output captured as text): python ARGS."""
    return subprocess.Popen(
        [sys.executable, *args],
        cwd=settings.BASE_DIR,
        env=worker_env(**extra_env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def purge_queues() -> None:
    """Empty this test process's Celery queues (its own Redis database): nothing an earlier test left reaches a
    worker started now."""
    from config.celery_app import app

    with app.connection_for_write() as conn:
        for queue in ("ingest", "default", "fanout"):
            conn.default_channel.client.delete(queue)


def wait_for(condition, *, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if value := condition():
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def start_beat(tmp_path, name: str = "beat", **extra_env) -> subprocess.Popen:
    """celery beat with the DatabaseScheduler, as the Procfile runs it; its log in tmp_path/<name>.log."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "config.celery_app",
            "beat",
            "--scheduler",
            "django_celery_beat.schedulers:DatabaseScheduler",
            "--pidfile",
            str(tmp_path / f"{name}.pid"),
            "-l",
            "info",
        ],
        cwd=settings.BASE_DIR,
        env=worker_env(**extra_env),
        stdout=subprocess.DEVNULL,
        stderr=open(tmp_path / f"{name}.log", "a"),
        start_new_session=True,
    )


def stop(process: subprocess.Popen) -> None:
    """SIGTERM to the process group (a warm shutdown); it must be over within 60 s (a loaded machine's)."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=60)


def stop_workers(workers):
    for worker in workers:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
    for worker in workers:
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()


def start_workers(count: int, tmp_path, level="warning", **extra_env) -> list[subprocess.Popen]:
    """`count` workers on the ingest and default queues."""
    return [
        start_celery_worker(tmp_path, queues="ingest,default", name=f"worker{n}", level=level, **extra_env)
        for n in range(count)
    ]


class Gate:
    """A TCP forwarder to `target` (host, port) on a port of its own: close() cuts every connection and refuses
    new ones, as a server that went down; open() lets them through again. Worker processes reach PostgreSQL
    through it, so a test can take the database away from them and not from itself."""

    def __init__(self, target: tuple[str, int]):
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.links: list[socket.socket] = []
        self.listening = False
        self.open()

    def open(self) -> None:
        if not self.listening:
            if self.listener.fileno() == -1:
                self.listener = socket.create_server(("127.0.0.1", self.port))
            self.listening = True
            threading.Thread(target=self._accept, args=(self.listener,), daemon=True).start()

    def close(self) -> None:
        self.listening = False
        # shutdown, not just close: it wakes the threads blocked on these sockets and tells the far ends
        for end in (self.listener, *self.links):
            with contextlib.suppress(OSError):
                end.shutdown(socket.SHUT_RDWR)
            end.close()
        self.links.clear()

    def _accept(self, listener: socket.socket) -> None:
        while self.listening:
            try:
                inbound, _ = listener.accept()
            except OSError:
                return
            outbound = socket.create_connection(self.target)
            self.links += [inbound, outbound]
            for source, sink in ((inbound, outbound), (outbound, inbound)):
                threading.Thread(target=self._pipe, args=(source, sink), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            with contextlib.suppress(OSError):
                while data := source.recv(65536):
                    sink.sendall(data)
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.close()


def assert_paced(stamps: list[float], *, rate: float, capacity: int, slack: float) -> None:
    """No stretch of time holds more than the burst plus what refilled in it (plus `slack` tokens)."""
    stamps = sorted(stamps)
    for first in range(len(stamps)):
        for last in range(first, len(stamps)):
            allowed = capacity + rate * (stamps[last] - stamps[first]) + slack
            assert last - first + 1 <= allowed, (
                f"{last - first + 1} tokens in {stamps[last] - stamps[first]:.3f} s; at most {allowed:.2f} allowed"
            )


def race_in_processes(tmp_path, worker_module: str, *id_groups: list[int]) -> list[dict]:
    """One OS process of `worker_module` per list of ids, all starting at once; their reports."""
    go_file = tmp_path / "go"
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", worker_module, str(go_file), *map(str, ids)],
            cwd=settings.BASE_DIR,
            env=worker_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for ids in id_groups
    ]
    go_when_ready(go_file, workers)  # every process has set Django up and waits for the go
    reports = []
    for worker in workers:
        out, err = worker.communicate(timeout=120)
        assert worker.returncode == 0, err[-3000:]
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports


def run_in_processes(tmp_path, *run_groups: list[ReminderRun]) -> list[dict]:
    return race_in_processes(
        tmp_path, "tests.reminders.fanout_worker", *([run.pk for run in runs] for runs in run_groups)
    )


def send_times(world, groups: range, phone: str = SENDER) -> list[float]:
    return sorted(
        datetime.fromisoformat(message["date"]).timestamp()
        for n in groups
        for message in world.chat_dump(group_id(n))["messages"]
        if message["sender"] == phone
    )
