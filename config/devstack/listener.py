"""supervisord's event listener under `make run`: keeps each process's state, since when, and how often it was
restarted in a JSON file (`make status` and the dashboard's health strip read it), says in the terminal when a
process ended and was started again, and stops a process that keeps ending, with a message saying so.

    python -m config.devstack.listener STATE_FILE    (started by supervisord, speaking its listener protocol)
"""

import json
import os
import sys
import time
import xmlrpc.client
from contextlib import suppress
from pathlib import Path

# A process that ended this many times in this window keeps ending: it is stopped, not started a twelfth time.
GIVE_UP_AFTER_EXITS = 10
GIVE_UP_WINDOW_SECONDS = 600


def _load(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return {"processes": {}}


def _save(path: Path, state: dict) -> None:
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(state, indent=1, sort_keys=True))
    os.replace(partial, path)  # a reader never sees half a file


def _say(message: str) -> None:
    print(f"  {time.strftime('%H:%M:%S %Z')} {message}", file=sys.stderr, flush=True)


def _give_up(name: str, conf: Path) -> None:
    from supervisor.xmlrpc import SupervisorTransport

    from config.devstack.supervise import CONTROL_USER, control_password

    transport = SupervisorTransport(CONTROL_USER, control_password(conf), os.environ["SUPERVISOR_SERVER_URL"])
    # Already stopped, or gone to FATAL: either way it is no longer started again.
    with suppress(OSError, xmlrpc.client.Error):
        xmlrpc.client.ServerProxy("http://127.0.0.1", transport=transport).supervisor.stopProcess(name, False)


def record(state: dict, event: str, payload: dict[str, str], now: float) -> list[str]:
    """Apply one PROCESS_STATE event to the state; returns what to do: "gave-up" when the process keeps ending."""
    name = payload["processname"]
    entry = state["processes"].setdefault(name, {"restarts": 0, "exits": [], "gave_up": False})
    new_state = event.removeprefix("PROCESS_STATE_")
    entry["state"] = new_state
    entry["since"] = now
    actions = []
    if new_state == "STARTING" and payload.get("from_state") in ("EXITED", "BACKOFF"):
        entry["restarts"] += 1
    if new_state == "RUNNING":
        entry["gave_up"] = False
    if new_state == "EXITED" and payload.get("expected") == "0" or new_state == "BACKOFF":
        entry["exits"] = [moment for moment in entry["exits"] if moment > now - GIVE_UP_WINDOW_SECONDS] + [now]
        if len(entry["exits"]) >= GIVE_UP_AFTER_EXITS and not entry["gave_up"]:
            entry["gave_up"] = True
            actions.append("gave-up")
    if new_state == "FATAL":
        entry["gave_up"] = True
    return actions


def _tell(name: str, event: str, payload: dict[str, str], entry: dict, actions: list[str], log: Path) -> None:
    if event == "PROCESS_STATE_EXITED" and payload.get("expected") == "0":
        _say(f"{name} ended unexpectedly; started again (restart {entry['restarts'] + 1}, log {log}).")
    if "gave-up" in actions:
        _say(
            f"{name} ended {GIVE_UP_AFTER_EXITS} times in {GIVE_UP_WINDOW_SECONDS // 60} minutes: it is stopped and "
            f"not started again. Read {log}, then `make status`; Ctrl-C and `make run` starts everything again."
        )
    if event == "PROCESS_STATE_FATAL":
        _say(
            f"{name} could not start ({entry['restarts']} tries): it is left stopped. Read {log}; Ctrl-C and "
            "`make run` starts everything again."
        )


def main(argv: list[str]) -> int:
    from supervisor import childutils

    path = Path(argv[0])
    logs = path.parent.parent / "log"
    state = _load(path)
    while True:
        headers, body = childutils.listener.wait(sys.stdin, sys.stdout)
        payload = dict(token.split(":", 1) for token in body.split())
        name, event = payload.get("processname", ""), headers["eventname"]
        if name and payload.get("groupname") != "watch":
            actions = record(state, event, payload, time.time())
            entry = state["processes"][name]
            _tell(name, event, payload, entry, actions, logs / f"{name}.log")
            if "gave-up" in actions:
                _give_up(name, path.parent / "supervisord.conf")
                entry["state"] = "STOPPED"
            _save(path, state)
        childutils.listener.ok(sys.stdout)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
