"""`make run` itself, unattended: each process killed in turn comes back while the stack keeps serving; its Redis
flushed and down for 8 s in the middle of a fan-out ends with the run a success, every group once, and `make run`
still running. Each test starts a whole stack (about a minute) and is bounded in time."""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import redis

from config.devstack import Stack
from config.devstack.supervise import rpc

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.alone, pytest.mark.processes]  # a whole stack each, on fixed ports of its own


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class MakeRun:
    """`python -m config.devstack run` in a process group of its own (as a terminal's foreground job), on free
    ports and a var/ folder of the test's own."""

    def __init__(self, tmp_path: Path, **env: str):
        # Not under pytest's own temporary folder, which every pytest session on the machine makes private again:
        # the restarted PostgreSQL (its own OS user under root) must still reach its data.
        self.var = Path(tempfile.mkdtemp(prefix="stashcast-make-run-")) / "var"
        self.var.parent.chmod(0o755)
        ports = {name: _free_port() for name in ("STASHCAST_PG_PORT", "STASHCAST_REDIS_PORT", "PORT", "FLOWER_PORT")}
        self.stack = Stack(
            var=self.var,
            pg_port=ports["STASHCAST_PG_PORT"],
            redis_port=ports["STASHCAST_REDIS_PORT"],
            web_port=ports["PORT"],
            flower_port=ports["FLOWER_PORT"],
        )
        drop = ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "STASHCAST_IGNORE_STACK_ENV", "SANDBOX_PATH")
        self.env = {key: value for key, value in os.environ.items() if key not in drop and key != "MEDIA_ROOT"}
        self.env.update({name: str(port) for name, port in ports.items()}, STASHCAST_VAR_DIR=str(self.var), **env)
        self.log = tmp_path / "run.log"
        with self.log.open("a") as out:  # appended to: supervisord's listener writes to the same file
            self.process = subprocess.Popen(
                [sys.executable, "-m", "config.devstack", "run"],
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def said(self) -> str:
        return self.log.read_text()

    def wait_started(self, timeout: float = 240) -> None:
        self.wait_for(lambda: "Ctrl-C stops everything" in self.said(), timeout, "the banner")
        for name in ("web", "worker", "beat", "flower"):
            self.wait_for(lambda name=name: self.info(name)["statename"] == "RUNNING", 60, f"{name} running")
        self.wait_for(self.serving, 60, "the dashboard serving")

    def wait_for(self, check, timeout: float, what: str, *, log: str = "web") -> None:
        deadline = time.monotonic() + timeout
        while not check():
            assert self.process.poll() is None, f"make run ended while waiting for {what}:\n{self.said()[-4000:]}"
            assert time.monotonic() < deadline, f"no {what} in {timeout:.0f}s:\n{self.said()[-3000:]}\n{self.tail(log)}"
            time.sleep(0.5)

    def tail(self, name: str) -> str:
        path = self.var / "log" / f"{name}.log"
        return f"{path}:\n{path.read_text()[-3000:] if path.exists() else ''}"

    def info(self, name: str) -> dict:
        return rpc(self.stack).supervisor.getProcessInfo(name)

    def serving(self) -> bool:
        """The dashboard answers, with its database and Redis ok (beat may still be on its way)."""
        url = f"http://127.0.0.1:{self.stack.web_port}/healthz?beat=optional"
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return response.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def manage(self, code: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "config.devstack", "manage", "shell", "-c", code],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""  # after the shell's own word

    def status(self) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "config.devstack", "status"], cwd=ROOT, env=self.env, capture_output=True, text=True
        )

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)  # what Ctrl-C in the terminal sends
        try:
            assert self.process.wait(timeout=240) == 0, self.said()[-4000:]
        finally:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
            shutil.rmtree(self.var.parent, ignore_errors=True)
        assert "Traceback" not in self.said().split("Ctrl-C stops everything")[0], self.said()[-4000:]
        assert (
            self.said()
            .rstrip()
            .endswith(f"Stopped. The data is kept in {self.var}: the next `make run` starts from it.")
        )


def test_each_process_killed_in_turn_comes_back_and_the_stack_keeps_serving(tmp_path):
    stack = MakeRun(tmp_path)
    try:
        stack.wait_started()
        killed = ["web", "worker", "beat", "flower", "bot", "postgres", "redis"]
        for name in killed:
            before = stack.info(name)["pid"]
            os.kill(before, signal.SIGKILL)
            stack.wait_for(
                lambda name=name, before=before: (
                    (info := stack.info(name))["statename"] == "RUNNING" and info["pid"] != before
                ),
                90,
                f"{name} started again",
                log=name,
            )
            stack.wait_for(stack.serving, 90, f"the dashboard serving after {name} was killed")

        status = stack.status()
        assert status.returncode == 0, status.stdout + status.stderr
        rows = {line.split()[0]: line.split() for line in status.stdout.splitlines()[1:] if line.strip()}
        for name in killed:
            assert rows[name][1] == "RUNNING" and int(rows[name][-1]) >= 1, status.stdout
        assert f"{killed[0]} ended unexpectedly; started again" in stack.said()
    finally:
        stack.stop()
    assert stack.status().returncode == 3  # not running: said so, as systemctl does


FLASH_SALE_RUN = "from reminders.models import ReminderRun; run = ReminderRun.objects.get(reminder__name='Flash sale')"
RESUME = FLASH_SALE_RUN + "; from reminders.services import reminder_run_resume; reminder_run_resume(run=run)"
PROGRESS = FLASH_SALE_RUN + "; import json; print(json.dumps([run.status, run.sent, run.total]))"
PER_GROUP = (
    FLASH_SALE_RUN
    + "; import json; from telegram.management.world import sandbox_world_open\n"
    + "with sandbox_world_open() as world:\n"
    + "    ids = run.targets.values_list('chat__telegram_id', flat=True)\n"
    + "    posts = [world.chat_dump(i)['messages'] for i in ids]\n"
    + "    print(json.dumps([sum('Flash sale' in (m['text'] or '') for m in chat) for chat in posts]))"
)


def test_redis_flushed_and_down_mid_fanout_the_run_ends_success_every_group_once_and_make_run_never_exits(tmp_path):
    # A slower pace, so the fan-out is under way when Redis goes; a stuck run is re-queued within a minute.
    pace = {"REMINDER_MAX_SEND_PER_MINUTE": "20", "WORK_STALE_AFTER_SECONDS": "30", "RUNS_REAP_EVERY_SECONDS": "10"}
    stack = MakeRun(tmp_path, **pace)
    try:
        stack.wait_started()
        status, sent, total = json.loads(stack.manage(PROGRESS))
        assert status == "paused" and sent < total  # the demo's flash sale: the window closed yesterday
        stack.manage(RESUME)
        stack.wait_for(lambda: json.loads(stack.manage(PROGRESS))[1] > sent, 120, "the fan-out under way")

        redis.Redis(port=stack.stack.redis_port).flushall()
        control = rpc(stack.stack).supervisor
        control.stopProcess("redis")
        time.sleep(8)
        control.startProcess("redis")

        stack.wait_for(lambda: json.loads(stack.manage(PROGRESS))[0] == "success", 300, "the run ended success")
        assert json.loads(stack.manage(PER_GROUP)) == [1] * total
        assert stack.process.poll() is None
        assert stack.serving()
    finally:
        stack.stop()
