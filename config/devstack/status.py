"""`make status`: what the stack of this checkout runs, since when, and how often each process was restarted;
`make service`: a systemd unit that runs `make run`'s stack at boot, under a user of its own, restarted if it ends."""

import json
import os
import shutil
import subprocess
import sys
import xmlrpc.client
from datetime import datetime
from pathlib import Path

from config.devstack.base import ROOT, Stack, StackError
from config.devstack.supervise import rpc, state_path, supervisor_running

UNIT_NAME = "stashcast.service"
SERVICE_USER = "stashcast"


def _when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).astimezone().strftime("%Y-%m-%d %H:%M:%S %Z") if timestamp else "-"


def status_lines(processes: list[dict], restarts: dict) -> list[str]:
    """One line a process: name, state, since when, restarts (and whether it was given up on)."""
    lines = [f"{'PROCESS':<10} {'STATE':<9} {'SINCE':<24} RESTARTS"]
    for info in processes:
        name = info["name"]
        if name == "watch":
            continue
        entry = restarts.get(name, {})
        since = info["start"] if info["statename"] == "RUNNING" else info["stop"]
        note = "  (kept ending: stopped, see its log)" if entry.get("gave_up") else ""
        lines.append(f"{name:<10} {info['statename']:<9} {_when(since):<24} {entry.get('restarts', 0)}{note}")
    return lines


def command_status(stack: Stack) -> int:
    """0 when every process runs, 1 when one does not, 3 when the stack is not running (as systemctl says)."""
    try:
        processes = rpc(stack).supervisor.getAllProcessInfo() if supervisor_running(stack) else None
    except (OSError, xmlrpc.client.Error):
        processes = None
    if processes is None:
        print(f"The stack of {ROOT} is not running (`make run` starts it).")
        return 3
    try:
        restarts = json.loads(state_path(stack).read_text())["processes"]
    except (OSError, ValueError, KeyError):
        restarts = {}
    print("\n".join(status_lines(processes, restarts)))
    print(f"\nLogs: {stack.var / 'log'}/<process>.log")
    down = [info["name"] for info in processes if info["statename"] != "RUNNING" and info["name"] != "watch"]
    return 1 if down else 0


def unit_text(*, user: str, root: Path, python: str) -> str:
    """The systemd unit: the stack's own command (not make, which may reinstall the venv) as `user`; SIGTERM to
    it alone, which stops every process in turn; Restart=always brings it back after any ending."""
    return f"""[Unit]
Description=Stashcast (dashboard, workers, beat, Flower, bot, PostgreSQL and Redis on one machine)
After=network-online.target
Wants=network-online.target

[Service]
Type=simple
User={user}
WorkingDirectory={root}
ExecStart={python} -m config.devstack run
KillMode=mixed
KillSignal=SIGTERM
TimeoutStopSec=180
Restart=always
RestartSec=10
# A crash loop of the whole stack is stopped after 5 starts in 10 minutes: `systemctl status stashcast` says so.
StartLimitIntervalSec=600
StartLimitBurst=5

[Install]
WantedBy=multi-user.target
"""


def command_service(stack: Stack, args: list[str]) -> int:
    """Prints the unit; with --install (as root) creates the user, hands it var/, installs and starts the unit."""
    user = args[args.index("--user") + 1] if "--user" in args else SERVICE_USER
    text = unit_text(user=user, root=ROOT, python=sys.executable)
    if "--install" not in args:
        print(text)
        print(
            f"# `make service ARGS=--install` (as root) writes this to /etc/systemd/system/{UNIT_NAME} and starts it."
        )
        return 0
    if os.geteuid() != 0:
        raise StackError("Installing the unit needs root: `sudo make service ARGS=--install`.")
    if shutil.which("systemctl") is None:
        raise StackError("No systemctl on this machine: run the unit above with the init system it has.")
    if subprocess.run(["id", user], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "--system", "--home-dir", str(stack.var), "--shell", "/usr/sbin/nologin", user])
    stack.var.mkdir(parents=True, exist_ok=True)
    subprocess.run(["chown", "-R", f"{user}:", str(stack.var)], check=True)
    Path("/etc/systemd/system", UNIT_NAME).write_text(text)
    subprocess.run(["systemctl", "daemon-reload"], check=True)
    subprocess.run(["systemctl", "enable", "--now", UNIT_NAME], check=True)
    print(f"Installed {UNIT_NAME}: it runs at boot as {user}. `make status` and `journalctl -u stashcast` tell how.")
    return 0
