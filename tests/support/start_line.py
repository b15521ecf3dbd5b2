"""A start line for test programs that must begin at the same moment: each says it is ready (its Django set up,
its work about to begin), the test says go once all of them have. Imports nothing of Django: the programs use it
too."""

import os
import subprocess
import time
from pathlib import Path


def _ready_file(go_file, pid: int) -> Path:
    return Path(f"{go_file}.ready-{pid}")


def wait_at_start_line(go_file) -> None:
    """In the program: say this process is ready, then wait for the go."""
    _ready_file(go_file, os.getpid()).touch()
    while not os.path.exists(go_file):
        time.sleep(0.005)


def go_when_ready(go_file, processes: list[subprocess.Popen], *, timeout: float = 120) -> None:
    """In the test: give the go as soon as every process is at the start line (or one has ended: its exit code
    and output tell why)."""
    deadline = time.monotonic() + timeout
    while not all(_ready_file(go_file, p.pid).exists() or p.poll() is not None for p in processes):
        if time.monotonic() > deadline:
            raise AssertionError(f"the processes were not all ready within {timeout:.0f} s")
        time.sleep(0.02)
    Path(go_file).touch()
