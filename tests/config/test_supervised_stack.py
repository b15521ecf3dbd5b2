"""`make run` under supervisord: every process and embedded server a program that is restarted, with backoff and a
limit, a rotated log each under var/log/; the listener that counts restarts and stops a process that keeps ending;
`make status`; the systemd unit of `make service`."""

import configparser
import json
import os
import subprocess
import sys
from pathlib import Path

from config.devstack import Stack, procfile_lines
from config.devstack.listener import GIVE_UP_AFTER_EXITS, record
from config.devstack.status import status_lines, unit_text
from config.devstack.supervise import SOCKET_PATH_BYTES, Program, procfile_programs, socket_path, supervisord_conf

ROOT = Path(__file__).resolve().parents[2]


def _conf(tmp_path: Path) -> configparser.ConfigParser:
    stack = Stack(var=tmp_path / "var", pg_port=1, redis_port=2, web_port=3, flower_port=4)
    servers = [
        Program("postgres", ["postgres", "-D", "data", "-k", ""], 10, True, "pgserver", stopsignal="INT"),
        Program("redis", ["redis-server", "--port", "2"], 10, True),
    ]
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(
        supervisord_conf(stack, servers + procfile_programs(procfile_lines(ROOT / "Procfile")), password="p")
    )
    return parser


def test_every_procfile_process_and_both_servers_are_restarted_with_backoff_a_limit_and_a_rotated_log(tmp_path):
    conf = _conf(tmp_path)
    names = ["postgres", "redis", *procfile_lines(ROOT / "Procfile")]
    assert {"web", "worker", "beat", "flower", "bot"} <= set(names)
    for name in names:
        program = conf[f"program:{name}"]
        assert program["autorestart"] == "true", name
        assert int(program["startretries"]) > 0 and int(program["startsecs"]) > 0, name  # backoff, then FATAL
        assert program["stdout_logfile"] == str(tmp_path / "var" / "log" / f"{name}.log")
        assert program["redirect_stderr"] == "true"
        assert program["stdout_logfile_maxbytes"] == "10MB" and int(program["stdout_logfile_backups"]) >= 1
    servers, apps = [conf[f"program:{name}"] for name in names[:2]], [conf[f"program:{name}"] for name in names[2:]]
    # The servers start first and stop last; the Procfile's processes wait for the migrations (started by name).
    assert max(int(p["priority"]) for p in servers) < min(int(p["priority"]) for p in apps)
    assert all(p["autostart"] == "true" for p in servers) and all(p["autostart"] == "false" for p in apps)
    assert conf["program:postgres"]["user"] == "pgserver" and conf["program:postgres"]["stopsignal"] == "INT"
    assert conf["program:postgres"]["command"].endswith("-k ''"), "no Unix socket: an empty argument, kept"
    assert conf["eventlistener:watch"]["events"] == "PROCESS_STATE"
    assert conf["unix_http_server"]["chmod"] == "0700" and conf["unix_http_server"]["password"] == "p"


def test_a_checkout_too_deep_for_a_unix_socket_gets_one_of_its_own_in_the_temporary_folder():
    near = Stack(var=Path("/srv/stashcast/var"), pg_port=1, redis_port=2, web_port=3, flower_port=4)
    deep_var = Path("/srv") / ("checkouts-" * 12) / "var"
    deep, other = (
        Stack(var=var, pg_port=1, redis_port=2, web_port=3, flower_port=4) for var in (deep_var, deep_var / "x")
    )

    assert socket_path(near) == Path("/srv/stashcast/var/supervisor/supervisor.sock")
    assert len(os.fsencode(socket_path(deep))) <= SOCKET_PATH_BYTES
    assert socket_path(deep) == socket_path(deep) != socket_path(other), "the same each start, one per checkout"
    conf = configparser.ConfigParser(interpolation=None)
    conf.read_string(supervisord_conf(deep, [], password="p"))
    assert conf["unix_http_server"]["file"] == str(socket_path(deep))
    assert conf["supervisorctl"]["serverurl"] == f"unix://{socket_path(deep)}"


def test_a_procfile_line_runs_through_a_shell_then_gives_its_place_to_the_process(tmp_path):
    web = _conf(tmp_path)["program:web"]["command"]
    line = procfile_lines(ROOT / "Procfile")["web"]

    assert web.startswith("sh -c 'exec env AXES_VERBOSE=true gunicorn config.wsgi --bind 127.0.0.1:$WEB_PORT")
    done = subprocess.run(
        ["sh", "-c", f"exec env {line.replace('gunicorn config.wsgi', 'printenv AXES_VERBOSE WEB_PORT #')}"],
        env={**os.environ, "WEB_PORT": "8123"},
        capture_output=True,
        text=True,
    )
    assert done.stdout.split() == ["true", "8123"]


def test_make_run_and_compose_start_the_same_web_server():
    import yaml

    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    procfile = procfile_lines(ROOT / "Procfile")
    assert "gunicorn config.wsgi " in procfile["web"] and "exec gunicorn config.wsgi " in compose["web"]["command"][-1]
    assert "runserver" not in (ROOT / "Procfile").read_text()


def _event(state: dict, event: str, now: float, **payload) -> list[str]:
    return record(state, f"PROCESS_STATE_{event}", {"processname": "worker", **payload}, now)


def test_the_listener_counts_restarts_not_first_starts_nor_stops():
    state = {"processes": {}}
    _event(state, "STARTING", 0, from_state="STOPPED")
    _event(state, "RUNNING", 5, from_state="STARTING")
    _event(state, "EXITED", 60, from_state="RUNNING", expected="0")
    _event(state, "STARTING", 61, from_state="EXITED")
    _event(state, "RUNNING", 66, from_state="STARTING")
    _event(state, "STOPPING", 90, from_state="RUNNING")
    _event(state, "STOPPED", 91, from_state="STOPPING")
    _event(state, "STARTING", 92, from_state="STOPPED")

    entry = state["processes"]["worker"]
    assert (entry["restarts"], entry["exits"], entry["state"], entry["gave_up"]) == (1, [60], "STARTING", False)


def test_a_process_that_keeps_ending_is_given_up_once_and_one_that_ends_now_and_then_is_not():
    state = {"processes": {}}
    for n in range(GIVE_UP_AFTER_EXITS - 1):  # an hour apart: never that many in the window
        assert _event(state, "EXITED", n * 3600, expected="0") == []
    actions = []
    for n in range(GIVE_UP_AFTER_EXITS):
        actions += _event(state, "EXITED", 100_000 + n * 30, expected="0")
        _event(state, "STARTING", 100_001 + n * 30, from_state="EXITED")
    assert actions == ["gave-up"]
    assert state["processes"]["worker"]["gave_up"]


def test_the_listener_speaks_supervisords_protocol_and_keeps_its_file(tmp_path):
    """The real listener program, fed events as supervisord sends them."""
    path = tmp_path / "supervisor" / "processes.json"
    path.parent.mkdir()
    bodies = [
        ("PROCESS_STATE_RUNNING", "processname:web groupname:web from_state:STARTING pid:7"),
        ("PROCESS_STATE_EXITED", "processname:web groupname:web from_state:RUNNING expected:0 pid:7"),
        ("PROCESS_STATE_STARTING", "processname:web groupname:web from_state:EXITED tries:0"),
    ]
    events = "".join(
        f"ver:3.0 server:supervisor serial:{n} pool:watch poolserial:{n} eventname:{name} len:{len(body)}\n{body}"
        for n, (name, body) in enumerate(bodies)
    )
    done = subprocess.run(
        [sys.executable, "-m", "config.devstack.listener", str(path)],
        input=events,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )

    assert done.stdout.count("RESULT 2\nOK") == 3
    assert "web ended unexpectedly; started again (restart 1" in done.stderr
    assert json.loads(path.read_text())["processes"]["web"]["restarts"] == 1


def test_make_status_says_state_since_when_and_restarts():
    processes = [
        {"name": "web", "statename": "RUNNING", "start": 1_800_000_000, "stop": 0},
        {"name": "bot", "statename": "STOPPED", "start": 1_800_000_000, "stop": 1_800_000_100},
        {"name": "watch", "statename": "RUNNING", "start": 1_800_000_000, "stop": 0},
    ]
    lines = status_lines(processes, {"web": {"restarts": 4}, "bot": {"restarts": 10, "gave_up": True}})

    assert lines[0].split() == ["PROCESS", "STATE", "SINCE", "RESTARTS"]
    assert lines[1].split()[:2] == ["web", "RUNNING"] and lines[1].split()[-1] == "4"
    assert lines[2].split()[:2] == ["bot", "STOPPED"] and "kept ending" in lines[2]
    assert len(lines) == 3, "the listener is no process of the product"


def test_the_systemd_unit_runs_the_stack_as_its_own_user_and_restarts_it():
    unit = unit_text(user="stashcast", root=Path("/srv/stashcast"), python="/srv/stashcast/.venv/bin/python")

    assert "User=stashcast" in unit and "WorkingDirectory=/srv/stashcast" in unit
    assert "ExecStart=/srv/stashcast/.venv/bin/python -m config.devstack run" in unit
    assert "Restart=always" in unit and "KillMode=mixed" in unit and "WantedBy=multi-user.target" in unit


def test_make_service_prints_the_unit_without_installing_it():
    done = subprocess.run(
        [sys.executable, "-m", "config.devstack", "service", "--user", "ops"], capture_output=True, text=True, cwd=ROOT
    )

    assert done.returncode == 0 and "User=ops" in done.stdout and "--install" in done.stdout
