"""What every command of the local stack shares: its folders and ports, busy ports, secrets, the commands that use
its servers, and signals passed on to a child."""

import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from config.env import envint, read_env_file, var_dir, write_env_file

ROOT = Path(__file__).resolve().parents[2]
DEMO_WORLD = ROOT / "telegram" / "sandbox" / "worlds" / "demo.json"
PG_OS_USER = "pgserver"  # PostgreSQL refuses to run as root


class StackError(Exception):
    pass


@dataclass(frozen=True)
class Stack:
    var: Path
    pg_port: int
    redis_port: int
    web_port: int
    flower_port: int

    @classmethod
    def from_env(cls) -> "Stack":
        return cls(
            var=var_dir(ROOT),
            pg_port=envint("STASHCAST_PG_PORT", 54329, minimum=1),
            redis_port=envint("STASHCAST_REDIS_PORT", 63799, minimum=1),
            web_port=envint("PORT", 8000, minimum=1),
            flower_port=envint("FLOWER_PORT", 5555, minimum=1),
        )

    @property
    def stack_env(self) -> Path:
        return self.var / "stack.env"

    @property
    def secret_env(self) -> Path:
        return self.var / "secret.env"


def _port_busy(port: int) -> bool:
    """Whether something listens on 127.0.0.1:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def port_check_free(port: int, *, what: str, setting: str, alternative: str = "") -> None:
    if _port_busy(port):
        raise StackError(
            f"Port {port} ({what}) is already in use by another program. "
            f"Stop it, or set {setting} to a free port{alternative}."
        )


def _wait_for_port(port: int, *, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _port_busy(port):
            return
        time.sleep(0.1)
    raise StackError(f"{what} did not start listening on 127.0.0.1:{port} in {timeout:.0f}s")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, as another user (PostgreSQL runs as pgserver under root)
    return True


def ensure_secrets(path: Path) -> dict[str, str]:
    """Local secrets, generated once and kept in var/secret.env (never committed)."""
    from cryptography.fernet import Fernet

    values = read_env_file(path)
    changed = False
    defaults = {
        "DJANGO_SECRET_KEY": lambda: secrets.token_urlsafe(50),
        "STASHCAST_SESSION_KEYS": lambda: Fernet.generate_key().decode(),
        "STASHCAST_ADMIN_USER": lambda: os.environ.get("STASHCAST_ADMIN_USER", "admin"),
        "STASHCAST_ADMIN_PASSWORD": lambda: os.environ.get("STASHCAST_ADMIN_PASSWORD") or secrets.token_urlsafe(12),
        # Flower's basic auth, sent only by the console's /flower/ proxy: nobody types it.
        "FLOWER_BASIC_AUTH": lambda: f"flower:{secrets.token_urlsafe(24)}",
    }
    for key, make in defaults.items():
        if key not in values:
            values[key] = make()
            changed = True
    if changed:
        write_env_file(path, values)
        path.chmod(0o600)
    return values


def _user_path(stack: Stack) -> Path:
    return stack.var / "users" / str(os.getpid())


def other_users(stack: Stack) -> list[int]:
    """Live processes (other than this one) that run a command on this stack's services."""
    pids = []
    for path in (stack.var / "users").glob("*"):
        if not path.name.isdigit() or int(path.name) == os.getpid():
            continue
        try:
            os.kill(int(path.name), 0)
        except ProcessLookupError:
            path.unlink(missing_ok=True)  # a command that was killed
            continue
        except PermissionError:
            pass
        pids.append(int(path.name))
    return pids


@contextmanager
def _signals_ignored():
    """Shutdown must finish even if Ctrl-C is pressed again."""
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


class _ForwardSignals:
    """While a child runs, pass SIGTERM (and SIGINT when it is not in our terminal's
    process group) to it, then wait for it to finish: no orphans, no cut-short cleanup.

    The handlers are Python functions, so the child starts with default handlers.
    """

    def __init__(self, *, sigint: bool):
        self.forward_sigint = sigint
        self.proc: subprocess.Popen | None = None
        self.received: list[int] = []

    def __enter__(self):
        self._previous = {sig: signal.signal(sig, self._handle) for sig in (signal.SIGINT, signal.SIGTERM)}
        return self

    def __exit__(self, *exc_info):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum, frame):
        self.received.append(signum)
        if signum == signal.SIGINT and not self.forward_sigint:
            return
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signum)

    def run(self, args: list[str], **kwargs) -> int:
        self.start(args, **kwargs)
        return self.proc.wait()

    def start(self, args: list[str], **kwargs) -> subprocess.Popen:
        self.proc = subprocess.Popen(args, **kwargs)
        if self.received:  # a signal came before the child existed
            self.proc.send_signal(signal.SIGINT)
        return self.proc


def _base_env(stack: Stack, service_env: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    for key, value in ensure_secrets(stack.secret_env).items():
        env.setdefault(key, value)
    env.update(service_env)
    # The Procfile's `python` and `celery` are the venv's, activated or not.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    # Every worker, test process and listing child would compile the project again (and pytest rewrite every
    # test module again); __pycache__ is ignored by git.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _folders_in_var(stack: Stack, env: dict[str, str]) -> None:
    """Everything the stack writes goes under its var/ folder (unless set otherwise)."""
    env.setdefault("SANDBOX_PATH", str(stack.var / "sandbox"))
    env.setdefault("MEDIA_ROOT", str(stack.var / "media"))
    env.setdefault("INGEST_STAGING_DIR", str(stack.var / "staging"))
