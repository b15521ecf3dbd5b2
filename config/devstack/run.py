"""`make run`: the embedded servers and every process of the Procfile under supervisord (config/devstack/supervise.py),
which restarts what ends; Ctrl-C (or SIGTERM, as systemd sends) stops them all."""

import os
import subprocess
import sys
import time
from pathlib import Path

from config.devstack.base import (
    DEMO_WORLD,
    ROOT,
    Stack,
    StackError,
    _base_env,
    _folders_in_var,
    _ForwardSignals,
    _port_busy,
    _signals_ignored,
    _user_path,
    port_check_free,
)
from config.devstack.embedded import EmbeddedPostgres, EmbeddedRedis, stop_services
from config.devstack.supervise import (
    STOP_WAIT_SECONDS,
    Program,
    log_dir,
    procfile_programs,
    rpc,
    socket_path,
    state_path,
    supervisor_running,
    supervisord_command,
    write_conf,
)
from config.env import write_env_file

# What `make manage` / `make backup` read back from var/stack.env while `make run` runs.
SHARED_WITH_MANAGE = (
    "DATABASE_URL",
    "REDIS_URL",
    "DJANGO_DEBUG",
    "SANDBOX_PATH",
    "MEDIA_ROOT",
    "STORAGE_URL",
    "INGEST_STAGING_DIR",
    "FLOWER_URL",
)


def _manage(args: list[str], env: dict[str, str]) -> None:
    try:
        subprocess.run([sys.executable, str(ROOT / "manage.py"), *args], env=env, cwd=ROOT, check=True)
    except subprocess.CalledProcessError as exc:
        raise StackError(f"`manage.py {' '.join(args)}` failed (exit {exc.returncode}); see above.") from None


def _bot_token_set(env: dict[str, str]) -> bool:
    """Whether the bot has a token, the Bot page's or TELEGRAM_BOT_TOKEN: `make run` starts its line only then."""
    check = [sys.executable, str(ROOT / "manage.py"), "run_bot", "--check"]
    return subprocess.run(check, env=env, cwd=ROOT, capture_output=True).returncode == 0


def _sandbox_loaded(sandbox_path: Path) -> bool:
    from telegram.sandbox.world import DB_NAME

    return (sandbox_path / DB_NAME).exists()


def _telegram_backend(env: dict[str, str]) -> str:
    """The same default as settings: the real Telegram once API credentials are set."""
    credentials = env.get("TELEGRAM_API_ID") and env.get("TELEGRAM_API_HASH")
    return env.get("TELEGRAM_BACKEND") or ("telethon" if credentials else "sandbox")


def run_env(stack: Stack, service_env: dict[str, str]) -> dict[str, str]:
    """The environment supervisord starts the Procfile's processes in; each line then drops what it never uses."""
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
    # gunicorn's processes (it reads WEB_CONCURRENCY itself): enough for a team's operators on two cores.
    env.setdefault("WEB_CONCURRENCY", "3")
    return env


def procfile_lines(procfile: Path) -> dict[str, str]:
    """The processes of a Procfile, name: command line, in order."""
    lines = procfile.read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines if line and not line.startswith("#") and ":" in line)


def procfile_names(procfile: Path) -> list[str]:
    """The process names of a Procfile, in order."""
    return list(procfile_lines(procfile))


def services_for_run(stack: Stack) -> tuple[dict[str, str], list, list[Program], list]:
    """(environment, servers shared with another command, programs for supervisord, servers they start).

    The embedded servers are supervised like every process (restarted when they die), unless one already runs
    with its data under var/ (a `make test`): that one is shared, as before, and the last command out stops it.
    """
    env, shared, programs, supervised = {}, [], [], []
    _user_path(stack).parent.mkdir(parents=True, exist_ok=True)
    _user_path(stack).touch()
    if not os.environ.get("DATABASE_URL"):
        pg = EmbeddedPostgres(stack.var / "postgres", stack.pg_port)
        running_port = pg.running_port()
        if running_port is None:
            pg.prepare()
            # SIGINT: PostgreSQL's fast shutdown (sessions ended, everything written).
            programs.append(Program("postgres", pg.foreground_command(), 10, True, pg.as_user, stopsignal="INT"))
            supervised.append(pg)
        else:
            pg.port = running_port
            shared.append(pg)
            if not pg.fsync_on():
                print(
                    "  Warning: the embedded PostgreSQL was started by `make test`, without fsync: a power cut "
                    "can corrupt it. Stop the tests, then start again for durable storage.",
                    file=sys.stderr,
                )
        env["DATABASE_URL"] = pg.url
    if not os.environ.get("REDIS_URL"):
        redis = EmbeddedRedis(stack.var / "redis", stack.redis_port)
        running_port = redis.running_port()
        if running_port is None:
            redis.prepare()
            programs.append(Program("redis", [*redis.foreground_command(), "--logfile", ""], 10, True))
            supervised.append(redis)
        else:
            redis.port = running_port
            shared.append(redis)
        env["REDIS_URL"] = redis.url
    return env, shared, programs, supervised


def _wait_for_servers(stack: Stack, servers: list, supervisord, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    for server in servers:
        while not _port_busy(server.port):
            if supervisord.poll() is not None:
                raise StackError("supervisord ended while the servers started; see above.")
            if time.monotonic() > deadline:
                raise StackError(f"{type(server).__name__} did not start in {timeout:.0f}s: see {log_dir(stack)}.")
            time.sleep(0.2)
        if isinstance(server, EmbeddedPostgres):
            _wait_until(server.ensure_database, deadline)  # it listens a moment before it takes sessions


def _wait_until(step, deadline: float) -> None:
    import psycopg

    while True:
        try:
            return step()
        except psycopg.OperationalError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def _prepare_data(env: dict[str, str]) -> None:
    _manage(["migrate", "--no-input", "-v", "0"], env)
    _manage(["ensure_operator"], env)
    if _telegram_backend(env) == "sandbox" and not _sandbox_loaded(Path(env["SANDBOX_PATH"])):
        if DEMO_WORLD.exists():
            _manage(["sandbox_load", str(DEMO_WORLD), "--authorize"], env)
            _manage(["demo_reminders"], env)
            _manage(["demo_bot"], env)
        else:
            print(f"  No demo world at {DEMO_WORLD.relative_to(ROOT)}: the sandbox starts empty.")


def _banner(stack: Stack, env: dict[str, str]) -> None:
    print(f"\n  Dashboard: http://127.0.0.1:{stack.web_port}/")
    print(f"  Flower:    http://127.0.0.1:{stack.web_port}/flower/ (operators, through the dashboard's login)")
    print(f"  API docs:  http://127.0.0.1:{stack.web_port}/api/docs/")
    print(f"  Login: {env['STASHCAST_ADMIN_USER']}, password STASHCAST_ADMIN_PASSWORD in {stack.secret_env}")
    if env.get("DJANGO_DEBUG", "").lower() not in ("true", "1", "yes", "on"):
        print("  DEBUG is off (DJANGO_DEBUG=true make run turns it on).")
    print(f"  Logs: {stack.var / 'log'} (a file a process); `make status` says what runs and what was restarted.")
    print("  A process that ends is started again (up to a limit, which it then says).")
    print("  Ctrl-C stops everything; the next `make run` keeps the data.\n", flush=True)


def _stop(supervisord) -> None:
    """supervisord stops every process, the servers last (the reverse of their start), then ends."""
    if supervisord is not None and supervisord.poll() is None:
        supervisord.terminate()
        try:
            supervisord.wait(timeout=max(STOP_WAIT_SECONDS.values()) + 30)
        except subprocess.TimeoutExpired:
            supervisord.kill()
            supervisord.wait()


def command_run(stack: Stack) -> int:
    if stack.web_port == stack.flower_port:
        raise StackError(f"PORT and FLOWER_PORT are both {stack.web_port}; give Flower another port.")
    port_check_free(stack.web_port, what="the dashboard", setting="PORT")
    port_check_free(stack.flower_port, what="Flower", setting="FLOWER_PORT")
    stack.var.mkdir(parents=True, exist_ok=True)
    if supervisor_running(stack):
        raise StackError(f"This checkout's stack already runs (`make status`); {socket_path(stack)} answers.")
    supervisord = None
    service_env, shared, services, supervised = services_for_run(stack)
    try:
        env = run_env(stack, service_env)
        keep = ("DATABASE_URL", "REDIS_URL", "DJANGO_DEBUG", "SANDBOX_PATH", "MEDIA_ROOT", "STORAGE_URL")
        write_env_file(
            stack.stack_env, {key: env[key] for key in (*keep, "INGEST_STAGING_DIR", "FLOWER_URL") if key in env}
        )
        apps = procfile_lines(ROOT / "Procfile")
        conf = write_conf(stack, services + procfile_programs(apps))
        state_path(stack).unlink(missing_ok=True)
        # supervisord gets a session of its own, so Ctrl-C reaches it once, from us.
        with _ForwardSignals(sigint=True) as forward:
            supervisord = forward.start(supervisord_command(conf), env=env, cwd=ROOT, start_new_session=True)
            _wait_for_servers(stack, supervised, supervisord)
            _prepare_data(env)
            # Asked before the banner: once it says Ctrl-C stops everything, Ctrl-C reaches the processes at once.
            if not _bot_token_set(env):
                print("  The members' bot is not started: it has no token (the Bot page, or TELEGRAM_BOT_TOKEN).")
                apps.pop("bot", None)
            _banner(stack, env)
            if not forward.received:
                control = rpc(stack).supervisor
                for name in apps:
                    control.startProcess(name, False)
            code = supervisord.wait()
        return 0 if forward.received else code
    finally:
        with _signals_ignored():
            _stop(supervisord)
        stack.stack_env.unlink(missing_ok=True)
        state_path(stack).unlink(missing_ok=True)  # the health strip shows no processes of a stopped stack
        stop_services(stack, shared)
        print(f"\n  Stopped. The data is kept in {stack.var}: the next `make run` starts from it.", flush=True)
