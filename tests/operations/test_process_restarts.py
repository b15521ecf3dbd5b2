"""The health strip shows `make run`'s processes: all running, one that keeps restarting, one given up on; nothing
where no process manager of the stack writes its file (Compose)."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def _listener_saw(path: Path, events: list[tuple[str, str]]) -> None:
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


def _ran(name: str) -> list[tuple[str, str]]:
    return [("STARTING", f"processname:{name} groupname:{name} from_state:STOPPED tries:0")] + [
        ("RUNNING", f"processname:{name} groupname:{name} from_state:STARTING pid:9")
    ]


def _crashed(name: str) -> list[tuple[str, str]]:
    return [
        ("EXITED", f"processname:{name} groupname:{name} from_state:RUNNING expected:0 pid:9"),
        ("STARTING", f"processname:{name} groupname:{name} from_state:EXITED tries:0"),
        ("RUNNING", f"processname:{name} groupname:{name} from_state:STARTING pid:10"),
    ]


@pytest.fixture
def processes_file(settings, tmp_path):
    settings.STACK_PROCESSES_FILE = tmp_path / "supervisor" / "processes.json"
    return settings.STACK_PROCESSES_FILE


def test_without_a_stack_manager_the_strip_shows_no_processes(admin_client, processes_file):
    html = admin_client.get("/operations/").content.decode()

    assert "Processes" not in html


def test_all_running_says_how_many(admin_client, processes_file):
    _listener_saw(processes_file, _ran("web") + _ran("worker") + _crashed("worker"))

    html = admin_client.get("/operations/").content.decode()

    assert 'class="health-item health--ok"' in html and "<strong>2 running</strong>" in html


def test_a_process_that_keeps_restarting_is_shown_with_its_count(admin_client, processes_file):
    _listener_saw(processes_file, _ran("web") + _ran("worker") + _crashed("worker") * 3)

    html = admin_client.get("/operations/").content.decode()

    assert "health--late" in html and "<strong>restarting</strong>" in html
    assert "worker (3 restarts in 10 min)" in html and "web (" not in html


def test_a_process_given_up_on_is_shown_stopped(admin_client, processes_file):
    _listener_saw(processes_file, _ran("beat") + [("FATAL", "processname:beat groupname:beat from_state:BACKOFF")])

    html = admin_client.get("/operations/").content.decode()

    assert "health--error" in html and "<strong>stopped</strong>" in html and "beat stopped" in html


def test_restarts_long_ago_no_longer_count(processes_file):
    from core.processes import stack_processes

    _listener_saw(processes_file, _ran("web") + _crashed("web") * 3)

    assert stack_processes().state == "late"
    assert stack_processes(now=time.time() + 601).state == "ok"
