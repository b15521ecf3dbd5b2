"""The health strip shows `make run`'s processes: all running, one that keeps restarting, one given up on; nothing
where no process manager of the stack writes its file (Compose)."""

import time

import pytest

from tests.support.make_run import crashed, listener_saw, ran

pytestmark = pytest.mark.django_db


@pytest.fixture
def processes_file(settings, tmp_path):
    settings.STACK_PROCESSES_FILE = tmp_path / "supervisor" / "processes.json"
    return settings.STACK_PROCESSES_FILE


def test_without_a_stack_manager_the_strip_shows_no_processes(admin_client, processes_file):
    html = admin_client.get("/operations/").content.decode()

    assert "Processes" not in html


def test_all_running_says_how_many(admin_client, processes_file):
    listener_saw(processes_file, ran("web") + ran("worker") + crashed("worker"))

    html = admin_client.get("/operations/").content.decode()

    assert 'class="health-item health--ok"' in html and "<strong>2 running</strong>" in html


def test_a_process_that_keeps_restarting_is_shown_with_its_count(admin_client, processes_file):
    listener_saw(processes_file, ran("web") + ran("worker") + crashed("worker") * 3)

    html = admin_client.get("/operations/").content.decode()

    assert "health--late" in html and "<strong>restarting</strong>" in html
    assert "worker (3 restarts in 10 min)" in html and "web (" not in html


def test_a_process_given_up_on_is_shown_stopped(admin_client, processes_file):
    listener_saw(processes_file, ran("beat") + [("FATAL", "processname:beat groupname:beat from_state:BACKOFF")])

    html = admin_client.get("/operations/").content.decode()

    assert "health--error" in html and "<strong>stopped</strong>" in html and "beat stopped" in html


def test_restarts_long_ago_no_longer_count(processes_file):
    from core.processes import stack_processes

    listener_saw(processes_file, ran("web") + crashed("web") * 3)

    assert stack_processes().state == "late"
    assert stack_processes(now=time.time() + 601).state == "ok"
