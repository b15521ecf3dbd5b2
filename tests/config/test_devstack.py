"""The local stack of `make run` / `make test`: embedded services, busy ports, secrets, var/."""

import os
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
import redis
from cryptography.fernet import Fernet
from django.conf import settings

from config import devstack
from config.devstack import EmbeddedPostgres, EmbeddedRedis, Stack, StackError, _port_busy, ensure_secrets
from config.env import load_local_stack, var_dir

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def busy_port():
    """A port something else listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


def _stack(tmp_path: Path, **ports: int) -> Stack:
    values = {name: _free_port() for name in ("pg_port", "redis_port", "web_port", "flower_port")}
    values.update(ports)
    return Stack(var=tmp_path / "var", **values)


@pytest.mark.processes
def test_embedded_redis_starts_keeps_its_data_and_stops(tmp_path):
    port = _free_port()
    server = EmbeddedRedis(tmp_path / "redis", port)
    assert server.start() is True
    try:
        assert server.running()
        assert EmbeddedRedis(tmp_path / "redis", port).start() is False, "a running server is shared, not restarted"
        client = redis.Redis.from_url(server.url)
        client.set("stashcast:probe", "kept")
        assert client.get("stashcast:probe") == b"kept"
        client.close()
    finally:
        server.stop()
    assert not _port_busy(port)
    assert not server.pidfile.exists()
    assert (tmp_path / "redis" / "redis.log").exists()


def test_embedded_redis_names_the_busy_port(tmp_path, busy_port):
    with pytest.raises(StackError) as caught:
        EmbeddedRedis(tmp_path / "redis", busy_port).start()
    message = str(caught.value)
    assert f"Port {busy_port} (embedded Redis) is already in use" in message
    assert "STASHCAST_REDIS_PORT" in message and "REDIS_URL" in message
    assert not (tmp_path / "redis").exists(), "nothing is started or written when the port is taken"


def test_embedded_postgres_names_the_busy_port(tmp_path, busy_port):
    with pytest.raises(StackError) as caught:
        EmbeddedPostgres(tmp_path / "postgres", busy_port).start()
    message = str(caught.value)
    assert f"Port {busy_port} (embedded PostgreSQL) is already in use" in message
    assert "STASHCAST_PG_PORT" in message and "DATABASE_URL" in message
    assert not (tmp_path / "postgres").exists()


@pytest.mark.parametrize(
    ("which", "what", "setting"), [("web_port", "the dashboard", "PORT"), ("flower_port", "Flower", "FLOWER_PORT")]
)
def test_make_run_names_a_busy_web_or_flower_port_before_starting_anything(
    tmp_path, busy_port, monkeypatch, which, what, setting
):
    started = []
    monkeypatch.setattr(devstack.run, "services_for_run", lambda stack: started.append(stack))
    with pytest.raises(StackError, match=rf"Port {busy_port} \({what}\) is already in use.*set {setting} "):
        devstack.command_run(_stack(tmp_path, **{which: busy_port}))
    assert started == []


def test_make_run_refuses_one_port_for_web_and_flower(tmp_path):
    port = _free_port()
    with pytest.raises(StackError, match=f"PORT and FLOWER_PORT are both {port}"):
        devstack.command_run(_stack(tmp_path, web_port=port, flower_port=port))


def test_services_started_before_a_failure_are_stopped_again(tmp_path, busy_port, monkeypatch):
    stopped = []

    class FakePostgres:
        def __init__(self, data_dir, port, fsync=True):
            self.url = f"postgres://postgres@127.0.0.1:{port}/stashcast"

        def start(self):
            return True

        def stop(self):
            stopped.append("postgres")

    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    monkeypatch.setattr(devstack.embedded, "EmbeddedPostgres", FakePostgres)
    with pytest.raises(StackError, match=f"Port {busy_port}"):
        devstack.start_services(_stack(tmp_path, redis_port=busy_port))
    assert stopped == ["postgres"]


def test_services_stay_up_while_another_command_of_the_stack_uses_them(tmp_path):
    """`make test` must not stop the PostgreSQL it started while a `make run` it shares it with still runs."""
    stack = _stack(tmp_path)
    users = stack.var / "users"
    users.mkdir(parents=True)
    (users / "999999999").touch()  # a command that was killed: forgotten
    stopped = []

    class Service:
        def stop(self):
            stopped.append(self)

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        (users / str(other.pid)).touch()
        assert devstack.other_users(stack) == [other.pid]
        assert not (users / "999999999").exists()
        devstack.stop_services(stack, [Service()])
        assert stopped == []
    finally:
        other.kill()
        other.wait()
    devstack.stop_services(stack, [Service()])
    assert len(stopped) == 1


@pytest.mark.processes
def test_the_last_command_out_stops_a_server_another_command_started(tmp_path, monkeypatch):
    monkeypatch.setenv("DATABASE_URL", "postgres://127.0.0.1:1/elsewhere")  # only the embedded Redis here
    monkeypatch.delenv("REDIS_URL", raising=False)
    stack = _stack(tmp_path)
    first = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])  # `make run`, say
    try:
        (stack.var / "users").mkdir(parents=True)
        (stack.var / "users" / str(first.pid)).touch()
        server = EmbeddedRedis(stack.var / "redis", stack.redis_port)
        assert server.start() is True  # started by the first command

        _, used = devstack.start_services(stack)  # `make test` joins it
    finally:
        first.kill()
        first.wait()
    devstack.stop_services(stack, used)  # and ends last

    assert not server.running() and not _port_busy(stack.redis_port)


def test_the_running_embedded_postgres_is_shared_not_restarted():
    database = settings.DATABASES["default"]
    stack = Stack.from_env()
    data_dir = stack.var / "postgres"
    if database["HOST"] != "127.0.0.1" or int(database["PORT"]) != stack.pg_port:
        pytest.skip("the tests use a PostgreSQL of their own (DATABASE_URL), not the embedded one")
    if not (data_dir / "postmaster.pid").exists():
        pytest.skip(f"no embedded PostgreSQL runs from {data_dir}")
    server = EmbeddedPostgres(data_dir, stack.pg_port)
    assert server.running()
    assert server.start() is False
    with psycopg.connect(server.url) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)


def test_secrets_are_generated_once_and_kept_private(tmp_path, monkeypatch):
    monkeypatch.delenv("STASHCAST_ADMIN_PASSWORD", raising=False)
    monkeypatch.delenv("STASHCAST_ADMIN_USER", raising=False)
    path = tmp_path / "var" / "secret.env"
    first = ensure_secrets(path)
    assert set(first) == {
        "DJANGO_SECRET_KEY",
        "STASHCAST_SESSION_KEYS",
        "STASHCAST_ADMIN_USER",
        "STASHCAST_ADMIN_PASSWORD",
        "FLOWER_BASIC_AUTH",
    }
    assert (
        first["FLOWER_BASIC_AUTH"].startswith("flower:")
        and first["STASHCAST_ADMIN_PASSWORD"] not in (first["FLOWER_BASIC_AUTH"])
    )
    Fernet(first["STASHCAST_SESSION_KEYS"])  # a real key
    assert len(first["DJANGO_SECRET_KEY"]) >= 50
    assert first["STASHCAST_ADMIN_USER"] == "admin"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert ensure_secrets(path) == first


def test_var_folder_can_be_relocated(tmp_path, monkeypatch):
    monkeypatch.delenv("STASHCAST_VAR_DIR", raising=False)
    assert var_dir(ROOT) == ROOT / "var"
    monkeypatch.setenv("STASHCAST_VAR_DIR", str(tmp_path / "elsewhere"))
    assert var_dir(ROOT) == tmp_path / "elsewhere"
    assert Stack.from_env().var == tmp_path / "elsewhere"
    assert Stack.from_env().stack_env == tmp_path / "elsewhere" / "stack.env"


def test_manage_py_finds_the_running_stack_but_tests_ignore_it(tmp_path, monkeypatch):
    (tmp_path / "stack.env").write_text("STASHCAST_PROBE_URL=redis://127.0.0.1:1/0\n")
    monkeypatch.setenv("STASHCAST_VAR_DIR", str(tmp_path))
    monkeypatch.setenv("STASHCAST_PROBE_URL", "placeholder")
    monkeypatch.delenv("STASHCAST_PROBE_URL")  # restored (removed) after the test

    monkeypatch.setenv("STASHCAST_IGNORE_STACK_ENV", "true")
    load_local_stack(ROOT)
    assert "STASHCAST_PROBE_URL" not in os.environ

    monkeypatch.setenv("STASHCAST_IGNORE_STACK_ENV", "false")
    load_local_stack(ROOT)
    assert os.environ["STASHCAST_PROBE_URL"] == "redis://127.0.0.1:1/0"


def test_bad_port_setting_fails_loudly(monkeypatch):
    monkeypatch.setenv("STASHCAST_REDIS_PORT", "redis")
    assert devstack.main(["run"]) == 1


@pytest.mark.processes
def test_make_run_keeps_fsync_on_and_tests_may_turn_it_off(tmp_path):
    durable = EmbeddedPostgres(tmp_path / "pg", _free_port())
    assert durable.start() is True
    try:
        assert durable.fsync_on()
    finally:
        durable.stop()
    throwaway = EmbeddedPostgres(tmp_path / "pg", _free_port(), fsync=False)
    assert throwaway.start() is True
    try:
        assert not throwaway.fsync_on()
    finally:
        throwaway.stop()


def test_a_running_server_is_found_on_whatever_port_it_was_started_with(tmp_path, busy_port):
    data = tmp_path / "pg"
    data.mkdir()
    (data / "postmaster.pid").write_text(f"{os.getpid()}\n{data}\n1700000000\n{busy_port}\n\n127.0.0.1\n")
    server = EmbeddedPostgres(data, _free_port())
    assert server.running_port() == busy_port
    assert server.start() is False and server.port == busy_port

    redis_data = tmp_path / "redis"
    redis_data.mkdir()
    (redis_data / "redis.pid").write_text(str(os.getpid()))
    (redis_data / "redis.port").write_text(str(busy_port))
    assert EmbeddedRedis(redis_data, _free_port()).running_port() == busy_port


def test_a_server_that_died_is_not_taken_for_running(tmp_path):
    data = tmp_path / "pg"
    data.mkdir()
    (data / "postmaster.pid").write_text(f"{2**22 + 12345}\n{data}\n1700000000\n{_free_port()}\n")
    assert EmbeddedPostgres(data, _free_port()).running_port() is None


def test_make_manage_talks_to_the_running_stack_whatever_its_ports(tmp_path, busy_port, monkeypatch):
    stack = _stack(tmp_path)
    stack.var.mkdir()
    running = {"DATABASE_URL": f"postgres://postgres@127.0.0.1:{busy_port}/stashcast", "REDIS_URL": "redis://x/0"}
    stack.stack_env.write_text("".join(f"{key}={value}\n" for key, value in running.items()))
    monkeypatch.setattr(devstack, "start_services", lambda *args, **kwargs: pytest.fail("started its own servers"))
    seen = {}
    monkeypatch.setattr(devstack._ForwardSignals, "run", lambda self, args, env, cwd: seen.update(env) or 0)

    assert devstack.command_manage(stack, ["check"]) == 0
    assert (seen["DATABASE_URL"], seen["REDIS_URL"]) == (running["DATABASE_URL"], running["REDIS_URL"])


def test_make_manage_ignores_a_stack_env_left_by_a_killed_stack(tmp_path, monkeypatch):
    stack = _stack(tmp_path)
    stack.var.mkdir()
    stack.stack_env.write_text(f"DATABASE_URL=postgres://postgres@127.0.0.1:{_free_port()}/stashcast\n")
    assert devstack.running_stack_env(stack) == {}


def test_make_tests_s3_server_answers_the_s3_protocol_and_is_gone_after(tmp_path):
    import time

    from config.storage import object_store_parse

    server = devstack.TestObjectStore(tmp_path / "test-s3.log")
    server.start()
    try:
        deadline = time.monotonic() + 30
        while not _port_busy(server.port) and time.monotonic() < deadline:
            time.sleep(0.1)
        store = object_store_parse(f"s3+http://k:s@127.0.0.1:{server.port}/probe?region=us-east-1")
        store.client().create_bucket(Bucket="probe")
        store.client().put_object(Bucket="probe", Key="a", Body=b"bytes")
        assert store.client().get_object(Bucket="probe", Key="a")["Body"].read() == b"bytes"
    finally:
        server.stop()
    assert not _port_busy(server.port)


@pytest.mark.processes
def test_ctrl_c_stops_make_run_says_the_data_is_kept_and_prints_no_traceback(tmp_path):
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "STASHCAST_IGNORE_STACK_ENV")
    }
    ports = {"STASHCAST_PG_PORT", "STASHCAST_REDIS_PORT", "PORT", "FLOWER_PORT"}
    env.update({name: str(_free_port()) for name in ports}, STASHCAST_VAR_DIR=str(tmp_path / "var"))
    log = tmp_path / "run.log"
    with log.open("w") as out:
        stack = subprocess.Popen(
            [sys.executable, "-m", "config.devstack", "run"],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, as a terminal's foreground job is
        )
    try:
        deadline = time.monotonic() + 180
        while "Ctrl-C stops everything" not in log.read_text() and time.monotonic() < deadline:
            assert stack.poll() is None, log.read_text()[-3000:]
            time.sleep(1)
        time.sleep(5)  # supervisord's processes are up
        os.killpg(stack.pid, signal.SIGINT)  # what Ctrl-C in the terminal sends
        assert stack.wait(timeout=90) == 0, log.read_text()[-3000:]
    finally:
        if stack.poll() is None:
            os.killpg(stack.pid, signal.SIGKILL)
    said = log.read_text()
    assert "Traceback" not in said, said[-3000:]
    kept = f"Stopped. The data is kept in {tmp_path / 'var'}: the next `make run` starts from it."
    assert said.rstrip().endswith(kept), said[-3000:]


def test_make_test_runs_the_suite_on_several_processes_then_the_tests_that_must_run_alone():
    runs = devstack.pytest_runs(["-k", "claims", "tests/ingestion"], workers=4)

    assert runs == [
        ["-n", "4", "--dist", "worksteal", "--tests-alone=skip", "-k", "claims", "tests/ingestion"],
        ["-p", "no:xdist", "--tests-alone=only", "-k", "claims", "tests/ingestion"],
    ]


def test_a_choice_of_the_tests_that_run_alone_is_one_run_on_several_processes():
    runs = devstack.pytest_runs(["-m", "not browser", "--tests-alone=skip"], workers=4)

    assert runs == [["-n", "4", "--dist", "worksteal", "-m", "not browser", "--tests-alone=skip"]]


@pytest.mark.parametrize(
    "args",
    [
        ["tests/core/test_locks.py"],
        ["tests/core/test_locks.py::test_one"],
        ["tests/core/test_locks.py::test_one", "tests/core/test_locks.py::test_two"],
        ["-x", "tests/core"],
        ["--maxfail=2"],
        ["--pdb"],
    ],
)
def test_one_file_or_stopping_at_the_first_failure_runs_in_one_process(args):
    assert devstack.pytest_runs(args, workers=4) == [args]


def test_several_files_run_on_several_processes():
    runs = devstack.pytest_runs(["tests/core/test_locks.py", "tests/core/test_runs.py"], workers=2)

    assert [run[:2] for run in runs] == [["-n", "2"], ["-p", "no:xdist"]]


@pytest.mark.parametrize("args", [["-n", "2"], ["-n2"], ["--numprocesses=3"], ["-p", "no:xdist"]])
def test_the_callers_own_choice_of_processes_is_kept(args):
    assert devstack.pytest_runs(args, workers=4) == [args]


def test_one_worker_runs_everything_in_one_process(monkeypatch):
    monkeypatch.setenv("STASHCAST_TEST_WORKERS", "1")

    assert devstack.pytest_runs([], workers=devstack.pytest_workers()) == [[]]


@pytest.mark.parametrize(
    ("codes", "code"), [([0, 0], 0), ([0, 5], 0), ([5, 0], 0), ([5, 5], 5), ([1, 0], 1), ([0, 1], 1)]
)
def test_the_exit_code_of_make_test_is_the_first_failure_and_no_tests_only_when_none_ran(codes, code):
    assert devstack._exit_code(codes) == code


def test_each_test_process_has_a_redis_database_and_folders_of_its_own():
    """Settings as a test process of pytest-xdist reads them (config/settings/test.py)."""
    code = (
        "from django.conf import settings; "
        "print(settings.REDIS_URL.rsplit('/', 1)[1], settings.CELERY_BROKER_URL == settings.REDIS_URL, "
        "settings.SANDBOX_PATH.name, settings.MEDIA_ROOT.name)"
    )
    chosen = ("SANDBOX_PATH", "MEDIA_ROOT", "STASHCAST_TEST_REDIS_DB", "TEST_REDIS_URL")
    env = {key: value for key, value in os.environ.items() if key not in chosen}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.test", PYTEST_XDIST_WORKER="gw3")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["4", "True", "test-sandboxgw3", "test-mediagw3"]


def test_more_test_processes_than_redis_databases_is_refused_with_what_to_do():
    env = {key: value for key, value in os.environ.items() if key not in ("STASHCAST_TEST_REDIS_DB", "TEST_REDIS_URL")}
    env.update(DJANGO_SETTINGS_MODULE="config.settings.test", PYTEST_XDIST_WORKER="gw15")
    done = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; settings.REDIS_URL"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )

    assert done.returncode != 0
    assert "Redis has 16 (0-15)" in done.stderr and "STASHCAST_TEST_WORKERS" in done.stderr


def test_make_run_knows_the_procfiles_processes_and_leaves_the_bot_out_without_a_token(tmp_path):
    procfile = tmp_path / "Procfile"
    procfile.write_text("# comment\nweb: python manage.py runserver\n\nbot: python manage.py run_bot\n")
    assert devstack.procfile_names(procfile) == ["web", "bot"]
    assert devstack.procfile_names(devstack.ROOT / "Procfile")[-1] == "bot"
