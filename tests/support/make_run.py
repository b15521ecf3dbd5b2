"""`make run` itself as a test or a benchmark drives it: started in a process group of its own (as a terminal's
foreground job) on free ports and a var/ folder of its own, asked through supervisord and `make manage`, stopped
with Ctrl-C."""

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

from config.devstack import Stack
from config.devstack.supervise import rpc

ROOT = Path(__file__).resolve().parents[2]


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


def flash_sale_progress(stack: MakeRun) -> tuple[str, int, int]:
    """The demo's flash sale run: (status, groups sent, groups)."""
    return tuple(json.loads(stack.manage(PROGRESS)))


def flash_sale_per_group(stack: MakeRun) -> list[int]:
    """How many times each of the run's groups got the flash sale."""
    return json.loads(stack.manage(PER_GROUP))


def listener_saw(path: Path, events: list[tuple[str, str]]) -> None:
    """The stack's own listener (config/devstack/listener.py) fed these events, as supervisord sends them."""
    path.parent.mkdir(parents=True, exist_ok=True)
    stream = "".join(
        f"ver:3.0 server:supervisor serial:{n} pool:watch poolserial:{n} eventname:PROCESS_STATE_{name} "
        f"len:{len(body)}\n{body}"
        for n, (name, body) in enumerate(events)
    )
    done = subprocess.run(
        [sys.executable, "-m", "config.devstack.listener", str(path)],
        input=stream,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.stdout.count("OK") == len(events), done.stderr


def ran(name: str) -> list[tuple[str, str]]:
    return [("STARTING", f"processname:{name} groupname:{name} from_state:STOPPED tries:0")] + [
        ("RUNNING", f"processname:{name} groupname:{name} from_state:STARTING pid:9")
    ]


def crashed(name: str) -> list[tuple[str, str]]:
    return [
        ("EXITED", f"processname:{name} groupname:{name} from_state:RUNNING expected:0 pid:9"),
        ("STARTING", f"processname:{name} groupname:{name} from_state:EXITED tries:0"),
        ("RUNNING", f"processname:{name} groupname:{name} from_state:STARTING pid:10"),
    ]
