"""The processes of a one-machine stack (`make run`, under supervisord): which keep restarting, which were given up.

The stack's event listener (config/devstack/listener.py) keeps, for each process, its state and the moments it
ended unexpectedly in STACK_PROCESSES_FILE; under Compose (or any other manager) there is no such file, and the
health strip shows nothing for processes.
"""

import json
import time
from dataclasses import dataclass

from django.conf import settings

# A process that ended this many times in the window keeps restarting: the health strip says which.
RESTARTING_AFTER_EXITS = 3
RESTARTING_WINDOW_SECONDS = 600


@dataclass(frozen=True)
class StackProcesses:
    state: str  # "ok" | "late" (one keeps restarting) | "error" (one was given up on: it is stopped)
    count: int  # processes the stack runs
    restarting: list[str]  # "web (4 restarts in 10 min)"
    stopped: list[str]  # names of the processes given up on

    @property
    def summary(self) -> str:
        return "; ".join([*(f"{name} stopped" for name in self.stopped), *self.restarting])


def stack_processes(now: float | None = None) -> StackProcesses | None:
    """None when no stack manager writes the file (Compose, tests)."""
    try:
        processes = json.loads(settings.STACK_PROCESSES_FILE.read_text())["processes"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    now = time.time() if now is None else now
    restarting, stopped = [], []
    for name, entry in sorted(processes.items()):
        if entry.get("gave_up"):
            stopped.append(name)
            continue
        recent = [moment for moment in entry.get("exits", []) if moment > now - RESTARTING_WINDOW_SECONDS]
        if len(recent) >= RESTARTING_AFTER_EXITS:
            restarting.append(f"{name} ({len(recent)} restarts in {RESTARTING_WINDOW_SECONDS // 60} min)")
    state = "error" if stopped else "late" if restarting else "ok"
    return StackProcesses(state=state, count=len(processes), restarting=restarting, stopped=stopped)
