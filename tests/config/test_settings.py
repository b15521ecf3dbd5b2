"""Settings fail loudly on bad values, pass Django's deploy checks, and configure Celery as DESIGN.md says."""

import logging
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cryptography.fernet import Fernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.module_loading import import_string

from config.celery_app import app
from config.env import envbool, envint, envlist, envstr
from core import task_names

ROOT = Path(__file__).resolve().parents[2]
QUEUES = {"ingest", "fanout", "default"}


# --- environment helpers -------------------------------------------------------------------------


@pytest.mark.parametrize("raw", ["maybe", "2", "yes please", "tru"])
def test_envbool_rejects_what_is_not_a_boolean(monkeypatch, raw):
    monkeypatch.setenv("STASHCAST_PROBE", raw)
    with pytest.raises(ImproperlyConfigured, match=r"STASHCAST_PROBE=.* is not a boolean"):
        envbool("STASHCAST_PROBE", False)


@pytest.mark.parametrize(("raw", "expected"), [("true", True), ("False", False), (" on ", True), ("0", False)])
def test_envbool_reads_booleans(monkeypatch, raw, expected):
    monkeypatch.setenv("STASHCAST_PROBE", raw)
    assert envbool("STASHCAST_PROBE", not expected) is expected


def test_envbool_default_when_unset_or_empty(monkeypatch):
    monkeypatch.delenv("STASHCAST_PROBE", raising=False)
    assert envbool("STASHCAST_PROBE", True) is True
    monkeypatch.setenv("STASHCAST_PROBE", "")
    assert envbool("STASHCAST_PROBE", False) is False


@pytest.mark.parametrize("raw", ["ten", "1.5", "0x10", "12 s"])
def test_envint_rejects_what_is_not_a_whole_number(monkeypatch, raw):
    monkeypatch.setenv("STASHCAST_PROBE", raw)
    with pytest.raises(ImproperlyConfigured, match=r"STASHCAST_PROBE=.* is not a whole number"):
        envint("STASHCAST_PROBE", 1)


def test_envint_enforces_its_minimum(monkeypatch):
    monkeypatch.setenv("STASHCAST_PROBE", "30")
    with pytest.raises(ImproperlyConfigured, match="STASHCAST_PROBE=30 must be at least 60"):
        envint("STASHCAST_PROBE", 3600, minimum=60)
    monkeypatch.setenv("STASHCAST_PROBE", "90")
    assert envint("STASHCAST_PROBE", 3600, minimum=60) == 90


def test_envstr_without_default_is_required(monkeypatch):
    monkeypatch.delenv("STASHCAST_PROBE", raising=False)
    with pytest.raises(ImproperlyConfigured, match="STASHCAST_PROBE must be set"):
        envstr("STASHCAST_PROBE")


def test_envlist_splits_and_trims(monkeypatch):
    monkeypatch.setenv("STASHCAST_PROBE", " a.example.com, ,b.example.com ")
    assert envlist("STASHCAST_PROBE", []) == ["a.example.com", "b.example.com"]


# --- production ----------------------------------------------------------------------------------


def _production_env(tmp_path: Path, **overrides: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith(("DJANGO_", "STASHCAST_"))}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="example.com",
        STASHCAST_SESSION_KEYS=Fernet.generate_key().decode(),
        # Nothing from a local stack's var/ folder leaks in.
        STASHCAST_VAR_DIR=str(tmp_path),
        DATABASE_URL=os.environ.get("DATABASE_URL", "postgres://stashcast@127.0.0.1:5432/stashcast"),
        REDIS_URL=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0"),
    )
    env.update(overrides)
    return {key: value for key, value in env.items() if value is not None}


def _manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.mark.processes  # starts OS processes (manage.py in a subprocess)
def test_production_settings_pass_the_deploy_checks(tmp_path):
    result = _manage(_production_env(tmp_path), "check", "--deploy", "--fail-level", "WARNING")
    assert result.returncode == 0, f"manage.py check --deploy failed:\n{result.stdout}\n{result.stderr}"


@pytest.mark.processes  # starts OS processes (manage.py in a subprocess)
def test_flower_starts_in_production_without_the_session_keys(tmp_path):
    env = _production_env(tmp_path, STASHCAST_SESSION_KEYS=None, STASHCAST_PROCESS="flower")
    result = _manage(env, "check")
    assert result.returncode == 0, result.stderr[-2000:]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"STASHCAST_SESSION_KEYS": None}, "STASHCAST_SESSION_KEYS must be set"),
        ({"STASHCAST_SESSION_KEYS": "not-a-key"}, "key 1 is not a Fernet key"),
        ({"DJANGO_ALLOWED_HOSTS": None}, "DJANGO_ALLOWED_HOSTS must be set"),
        ({"DJANGO_SECRET_KEY": None, "DJANGO_DEBUG": "true"}, "DJANGO_SECRET_KEY must be set"),
        ({"DJANGO_SECURE_SSL_REDIRECT": "sometimes"}, "DJANGO_SECURE_SSL_REDIRECT='sometimes' is not a boolean"),
        ({"STORAGE_URL": "minio:9000/stashcast"}, "STORAGE_URL must start with s3://"),
        ({"STORAGE_URL": "s3+http://key:secret@minio:9000"}, "STORAGE_URL names no bucket"),
        ({"WORK_STALE_AFTER_SECONDS": "10", "WORK_HEARTBEAT_SECONDS": "15"}, "is not well below"),
        ({"WORK_STALE_AFTER_SECONDS": "10", "WORK_HEARTBEAT_SECONDS": "6"}, "Use at most half of it"),
    ],
)
def test_production_refuses_to_start_misconfigured(tmp_path, overrides, message):
    result = _manage(_production_env(tmp_path, **overrides), "check")
    assert result.returncode != 0
    assert message in result.stderr, result.stderr[-2000:]


@pytest.mark.processes  # starts OS processes (manage.py in a subprocess)
def test_the_heartbeat_period_follows_the_stale_threshold(tmp_path):
    env = _production_env(tmp_path, WORK_STALE_AFTER_SECONDS="60")
    result = _manage(env, "shell", "-c", "from django.conf import settings; print(settings.WORK_HEARTBEAT_SECONDS)")
    assert result.stdout.split()[-1] == "20", result.stderr[-2000:]


# --- Celery ----------------------------------------------------------------------------------------


def test_celery_delivers_at_least_once_with_one_task_in_hand():
    conf = app.conf
    assert conf.task_acks_late is True
    assert conf.task_reject_on_worker_lost is True
    assert conf.worker_prefetch_multiplier == 1


def test_celery_visibility_timeout_is_above_the_longest_task():
    timeout = app.conf.broker_transport_options["visibility_timeout"]
    assert timeout >= 3600, "a task still running after visibility_timeout is delivered a second time"
    for limit in (app.conf.task_time_limit, app.conf.task_soft_time_limit):
        if limit:
            assert timeout > limit


def test_celery_speaks_json_only_and_sends_events_for_flower():
    conf = app.conf
    assert conf.task_serializer == "json"
    assert list(conf.accept_content) == ["json"]
    assert conf.result_serializer == "json"
    assert conf.worker_send_task_events is True
    assert conf.task_send_sent_event is True


def test_celery_routes_work_to_the_three_queues():
    def queue_of(name: str) -> str:
        return app.amqp.router.route({}, name)["queue"].name

    assert app.conf.task_default_queue == "default"
    assert queue_of(task_names.RUNS_REAP_ALL) == "default"
    assert queue_of(task_names.REMINDER_RUN_EXECUTE) == "fanout"
    assert queue_of(task_names.REMINDER_RUNS_AUTO_RESUME) == "default"  # short: never behind long runs
    assert settings.CELERY_TASK_ROUTES, "no task is routed off the default queue"
    for pattern, route in settings.CELERY_TASK_ROUTES.items():
        assert route["queue"] in QUEUES
        assert queue_of(pattern.replace("*", "example")) == route["queue"]


def _worker_queues(command: str) -> set[str]:
    match = re.search(r"-Q\s+(\S+)", command)
    assert match, f"worker command without -Q: {command}"
    return set(match.group(1).split(","))


def test_every_worker_consumes_every_queue():
    """A queue no worker consumes would strand its tasks; make run and compose run the same set."""
    procfile = dict(
        line.split(":", 1) for line in (ROOT / "Procfile").read_text().splitlines() if line and not line.startswith("#")
    )
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    assert _worker_queues(procfile["worker"]) == QUEUES
    # Compose splits them: one worker service per queue, each scaled on its own.
    workers = [
        service["command"] for service in compose["services"].values() if " worker " in str(service.get("command"))
    ]
    assert set().union(*(_worker_queues(command) for command in workers)) == QUEUES


def test_log_lines_inside_a_task_carry_its_id_and_name_and_others_nothing():
    handler = settings.LOGGING["handlers"]["console"]
    config = settings.LOGGING["formatters"][handler["formatter"]]
    formatter = import_string(config["()"])(fmt=config["fmt"], use_color=False)

    @app.task(name="tests.config.format_a_line", shared=False)
    def format_a_line():
        record = logging.LogRecord("ingestion", logging.INFO, __file__, 1, "scanning", None, None)
        return formatter.format(record)

    inside = format_a_line.apply(task_id="4f1c0d1e-task-id").get()
    assert "[tests.config.format_a_line 4f1c0d1e-task-id]" in inside
    assert "scanning" in inside
    outside = formatter.format(logging.LogRecord("web", logging.INFO, __file__, 1, "hello", None, None))
    assert outside.endswith(" INFO web: hello"), "outside a task, no placeholder stands in for one"


def test_celery_logs_through_django_logging():
    assert app.conf.worker_hijack_root_logger is False
    from celery.signals import setup_logging

    receivers = [ref() for _, ref in setup_logging.receivers]
    assert any(getattr(receiver, "__module__", "") == "config.celery_app" for receiver in receivers)
