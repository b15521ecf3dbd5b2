"""The listing children's fork server (packages/archives/forks.py): a child for every listing, however the
children or the server end, and nothing left running after the parent."""

import os
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest
from django.conf import settings

from packages.archives import ListingError, child, read_archive
from packages.detection import ZIP
from tests.support import hostile


def children_of(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def eventually(condition, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def small_zip(path: Path, names: list[str]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, name)
    return path


@pytest.fixture
def server_pid(tmp_path) -> int:
    """The fork server of this process, started by a first listing."""
    read_archive(ZIP, [small_zip(tmp_path / "first.zip", ["a.stl"])])
    return child._FORKS._server.pid


def test_listings_from_several_threads_at_once_each_get_their_own_answer(tmp_path):
    archives = [small_zip(tmp_path / f"{n}.zip", [f"model-{n}/part-{p}.stl" for p in range(n + 1)]) for n in range(8)]
    answers = {}

    def list_one(n):
        answers[n] = [entry.path for entry in read_archive(ZIP, [archives[n]]).entries]

    threads = [threading.Thread(target=list_one, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert answers == {n: [f"model-{n}/part-{p}.stl" for p in range(n + 1)] for n in range(8)}


def test_a_child_killed_mid_listing_is_a_reason_and_the_next_listing_is_answered(tmp_path, server_pid):
    slow = hostile.many_entries_zip(tmp_path / "many.zip", 150_000)
    outcome = {}

    def list_slow():
        try:
            read_archive(ZIP, [slow])
        except ListingError as exc:
            outcome["error"] = str(exc)

    lister = threading.Thread(target=list_slow)
    lister.start()
    assert eventually(lambda: children_of(server_pid)), "the listing has a child of its own"
    os.kill(children_of(server_pid)[0], signal.SIGKILL)
    lister.join()

    assert outcome["error"] == "Reading the archive listing stopped unexpectedly (signal 9)."
    assert [entry.path for entry in read_archive(ZIP, [small_zip(tmp_path / "b.zip", ["b.stl"])]).entries] == ["b.stl"]


def test_a_child_out_of_time_is_killed(tmp_path, server_pid, monkeypatch):
    monkeypatch.setattr(child, "LISTING_TIMEOUT_SECONDS", 0.2)
    with pytest.raises(ListingError, match=r"took longer than 0.2 s; it was stopped"):
        read_archive(ZIP, [hostile.many_entries_zip(tmp_path / "many.zip", 150_000)])

    assert eventually(lambda: not children_of(server_pid)), "the child was killed, not left to finish"


def test_a_fork_server_that_died_is_started_again(tmp_path, server_pid):
    os.kill(server_pid, signal.SIGKILL)
    assert eventually(lambda: not alive(server_pid))

    listing = read_archive(ZIP, [small_zip(tmp_path / "c.zip", ["c.stl"])])

    assert [entry.path for entry in listing.entries] == ["c.stl"]
    assert child._FORKS._server.pid != server_pid


def test_the_fork_server_ends_with_its_parent(tmp_path):
    archive = small_zip(tmp_path / "d.zip", ["d.stl"])
    code = (
        "import sys; from pathlib import Path; from packages.archives import child, read_archive; "
        "read_archive('zip', [Path(sys.argv[1])]); print(child._FORKS._server.pid)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(archive)], cwd=settings.BASE_DIR, capture_output=True, text=True, check=True
    )
    server = int(done.stdout.split()[-1])

    assert eventually(lambda: not alive(server)), "the fork server outlived the process it served"


def test_ctrl_c_to_the_process_group_leaves_the_fork_server_to_end_with_its_parent(tmp_path, server_pid):
    os.kill(server_pid, signal.SIGINT)
    time.sleep(0.2)

    assert alive(server_pid)
    assert [entry.path for entry in read_archive(ZIP, [small_zip(tmp_path / "e.zip", ["e.stl"])]).entries] == ["e.stl"]
