"""supervisord under `make run`: the embedded PostgreSQL and Redis, then every line of the Procfile, each restarted
when it ends, with backoff and a limit; a log a process, rotated, under var/log/; a listener (listener.py) that
counts restarts and stops a process that keeps ending
(docs/decisions/0150-make-run-runs-under-supervisord-which-restarts-what-ends.md).

The configuration is generated into var/supervisor/ on every start: nothing in it is to be edited by hand.
"""

import hashlib
import os
import secrets
import shlex
import sys
import tempfile
import xmlrpc.client
from dataclasses import dataclass
from pathlib import Path

from config.devstack.base import ROOT, Stack

# A process must stay up this long to count as started; one that ends sooner is started again after 1 s, 2 s, …
# (supervisord's backoff) up to START_RETRIES times, then left FATAL with a message.
START_SECONDS = 5
START_RETRIES = 10
LOG_BYTES = "10MB"
LOG_BACKUPS = 5
# What each process is given to end cleanly before it is killed: a worker finishes its task (acks_late
# redelivers one cut short), as Compose's stop_grace_period.
STOP_WAIT_SECONDS = {"worker": 120, "postgres": 60, "bot": 30}
CONTROL_USER = "stack"
# A Unix socket's path holds 107 bytes on Linux (103 on macOS): a checkout deep in a home folder can exceed it.
SOCKET_PATH_BYTES = 100


@dataclass(frozen=True)
class Program:
    name: str
    command: list[str]
    priority: int  # started in this order, stopped in the reverse one
    autostart: bool
    user: str | None = None
    stopsignal: str = "TERM"


def supervisor_dir(stack: Stack) -> Path:
    return stack.var / "supervisor"


def log_dir(stack: Stack) -> Path:
    return stack.var / "log"


def socket_path(stack: Stack) -> Path:
    """supervisord's control socket: under var/, or in the temporary folder when that path is too long for a Unix
    socket (named after var/, so each checkout has its own)."""
    path = supervisor_dir(stack) / "supervisor.sock"
    if len(os.fsencode(path)) <= SOCKET_PATH_BYTES:
        return path
    digest = hashlib.sha256(os.fsencode(stack.var.resolve())).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"stashcast-{digest}.sock"


def state_path(stack: Stack) -> Path:
    """Where the listener keeps each process's state and restarts; the dashboard's health strip reads it."""
    return supervisor_dir(stack) / "processes.json"


def procfile_programs(lines: dict[str, str]) -> list[Program]:
    """The Procfile's lines as a Procfile runner runs them: by a shell (for $WEB_PORT and `NAME=value command`),
    which then gives its place to the process, so supervisord's signals reach it."""
    return [
        Program(name=name, command=["sh", "-c", f"exec env {line}"], priority=100 + n, autostart=False)
        for n, (name, line) in enumerate(lines.items())
    ]


def _escape(value: str) -> str:
    return value.replace("%", "%%")  # supervisord expands %(name)s in its values


def _program_section(stack: Stack, program: Program) -> str:
    log = log_dir(stack) / f"{program.name}.log"
    lines = [
        f"[program:{program.name}]",
        f"command={_escape(shlex.join(program.command))}",
        f"directory={ROOT}",
        f"priority={program.priority}",
        f"autostart={str(program.autostart).lower()}",
        "autorestart=true",
        f"startsecs={START_SECONDS}",
        f"startretries={START_RETRIES}",
        f"stopsignal={program.stopsignal}",
        f"stopwaitsecs={STOP_WAIT_SECONDS.get(program.name, 30)}",
        # A worker's pool processes and gunicorn's workers go with their parent when it has to be killed.
        "killasgroup=true",
        "redirect_stderr=true",
        f"stdout_logfile={_escape(str(log))}",
        f"stdout_logfile_maxbytes={LOG_BYTES}",
        f"stdout_logfile_backups={LOG_BACKUPS}",
    ]
    if program.user:
        lines.append(f"user={program.user}")
    return "\n".join(lines)


def supervisord_conf(stack: Stack, programs: list[Program], *, password: str) -> str:
    """password: asked on the control socket (a folder only this user reads holds it too, and the file)."""
    here = supervisor_dir(stack)
    listener = shlex.join([sys.executable, "-m", "config.devstack.listener", str(state_path(stack))])
    sections = [
        "\n".join(
            [
                "[unix_http_server]",
                f"file={_escape(str(socket_path(stack)))}",
                "chmod=0700",
                f"username={CONTROL_USER}",
                f"password={password}",
                "",
                "[supervisord]",
                "nodaemon=true",
                # Said so, as supervisord asks: it runs as whoever started `make run` (systemd: the service's user).
                *(["user=root"] if os.geteuid() == 0 else []),
                f"logfile={_escape(str(log_dir(stack) / 'supervisord.log'))}",
                f"logfile_maxbytes={LOG_BYTES}",
                f"logfile_backups={LOG_BACKUPS}",
                f"pidfile={_escape(str(here / 'supervisord.pid'))}",
                f"childlogdir={_escape(str(log_dir(stack)))}",
                "",
                "[rpcinterface:supervisor]",
                "supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface",
                "",
                "[supervisorctl]",
                f"serverurl=unix://{_escape(str(socket_path(stack)))}",
                f"username={CONTROL_USER}",
                f"password={password}",
            ]
        ),
        *(_program_section(stack, program) for program in programs),
        "\n".join(
            [
                # Counts restarts, stops a process that keeps ending, and says both in the terminal.
                "[eventlistener:watch]",
                f"command={_escape(listener)}",
                f"directory={ROOT}",
                "events=PROCESS_STATE",
                "priority=1",
                "autorestart=true",
                "stdout_logfile=NONE",  # its stdout speaks supervisord's listener protocol
                "stderr_logfile=/dev/stderr",
                "stderr_logfile_maxbytes=0",
            ]
        ),
    ]
    return "\n\n".join(sections) + "\n"


def conf_path(stack: Stack) -> Path:
    return supervisor_dir(stack) / "supervisord.conf"


def write_conf(stack: Stack, programs: list[Program]) -> Path:
    supervisor_dir(stack).mkdir(parents=True, exist_ok=True)
    supervisor_dir(stack).chmod(0o700)
    log_dir(stack).mkdir(parents=True, exist_ok=True)
    path = conf_path(stack)
    path.touch(mode=0o600)
    path.chmod(0o600)
    path.write_text(supervisord_conf(stack, programs, password=secrets.token_urlsafe(24)))
    return path


def control_password(conf: Path) -> str | None:
    for line in conf.read_text().splitlines():
        if line.startswith("password="):
            return line.removeprefix("password=")
    return None


def supervisord_command(conf: Path) -> list[str]:
    return [sys.executable, "-m", "supervisor.supervisord", "-c", str(conf)]


def rpc(stack: Stack):
    """supervisord's XML-RPC interface, over its Unix socket."""
    from supervisor.xmlrpc import SupervisorTransport

    transport = SupervisorTransport(CONTROL_USER, control_password(conf_path(stack)), f"unix://{socket_path(stack)}")
    return xmlrpc.client.ServerProxy("http://127.0.0.1", transport=transport)


def supervisor_running(stack: Stack) -> bool:
    if not socket_path(stack).exists() or not conf_path(stack).exists():
        return False
    try:
        return rpc(stack).supervisor.getState()["statename"] == "RUNNING"
    except (OSError, xmlrpc.client.Error):
        return False
