"""Each process gets only the secrets it uses (docs/security.md), in `make run` (the Procfile, in the environment
config/devstack.py builds) and in docker-compose.yml: read from the environment each one really starts with."""

import json
import os
import re
import shlex
import subprocess
import sys
import time
import urllib.request
from base64 import b64encode
from pathlib import Path

import pytest
import yaml

from config.devstack import Stack, run_env

ROOT = Path(__file__).resolve().parents[2]
SECRETS = (
    "DATABASE_URL",
    "DJANGO_SECRET_KEY",
    "STASHCAST_SESSION_KEYS",
    "STASHCAST_ADMIN_PASSWORD",
    "TELEGRAM_API_HASH",
    "METRICS_TOKEN",
    "FLOWER_BASIC_AUTH",
    "STORAGE_URL",
)
# What each process uses: web all of them; workers what ingestion and sending need; beat the database (its
# schedule) alone; Flower its own basic auth alone (it reads the broker, which has no password here).
EXPECTED = {
    "web": set(SECRETS),
    "worker": {"DATABASE_URL", "DJANGO_SECRET_KEY", "STASHCAST_SESSION_KEYS", "TELEGRAM_API_HASH", "STORAGE_URL"},
    "beat": {"DATABASE_URL", "DJANGO_SECRET_KEY", "STORAGE_URL"},
    "flower": {"FLOWER_BASIC_AUTH"},
    # The members' bot: its own token and people's records (database, session keys that seal the token).
    "bot": {"DATABASE_URL", "DJANGO_SECRET_KEY", "STASHCAST_SESSION_KEYS", "TELEGRAM_API_HASH", "STORAGE_URL"},
}
COMPOSE_EXPECTED = {
    "web": EXPECTED["web"],
    "worker-ingest": EXPECTED["worker"],
    "worker-fanout": EXPECTED["worker"],
    "worker": EXPECTED["worker"],
    "beat": EXPECTED["beat"],
    "flower": EXPECTED["flower"],
    "bot": EXPECTED["bot"],
}
# After Django's settings are loaded: what the process holds then (a file it reads could have put a secret back).
PROBE = """
import json, os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
import django
django.setup()
from django.conf import settings
print(json.dumps({
    "secrets": sorted(name for name in SECRETS if os.environ.get(name)),
    "database": settings.DATABASES["default"]["ENGINE"],
    "site_key": settings.SECRET_KEY == SITE_KEY,
    "session_keys": bool(settings.SESSION_ENCRYPTION_KEYS),
}))
"""


def procfile() -> dict[str, str]:
    lines = (ROOT / "Procfile").read_text().splitlines()
    return dict(line.split(": ", 1) for line in lines if line and not line.startswith("#"))


@pytest.fixture
def make_run_env(tmp_path, monkeypatch):
    """What `make run` hands supervisord, with every secret set (some come only from .env in real life)."""
    monkeypatch.setenv("STASHCAST_VAR_DIR", str(tmp_path))  # var/secret.env is this test's
    for name in ("DJANGO_SETTINGS_MODULE", "STASHCAST_IGNORE_STACK_ENV"):
        monkeypatch.delenv(name, raising=False)  # make test's own, not make run's
    monkeypatch.setenv("TELEGRAM_API_ID", "12345")
    monkeypatch.setenv("TELEGRAM_API_HASH", "0123456789abcdef0123456789abcdef")
    monkeypatch.setenv("METRICS_TOKEN", "metrics-token-0123456789abcdef")
    monkeypatch.setenv("STORAGE_URL", "s3+http://user:object-store-password@127.0.0.1:9/stashcast")
    stack = Stack(var=tmp_path, pg_port=1, redis_port=1, web_port=18023, flower_port=15573)
    services = {"DATABASE_URL": os.environ["DATABASE_URL"], "REDIS_URL": os.environ["REDIS_URL"]}
    env = run_env(stack, services)
    assert (tmp_path / "secret.env").exists()  # where a secret left out could be read back from
    return env


def _probe(line: str, env: dict[str, str]) -> dict:
    prefix = re.match(r"(.*?)(?:celery|python|gunicorn) ", line).group(1)
    code = f"SECRETS = {SECRETS!r}; SITE_KEY = {env['DJANGO_SECRET_KEY']!r}\n{PROBE}"
    done = subprocess.run(
        ["sh", "-c", f"{prefix}python -c {shlex.quote(code)}"],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.processes  # a Python process per Procfile line
def test_make_run_gives_each_process_only_the_secrets_it_uses(make_run_env):
    processes = procfile()
    assert set(EXPECTED) <= set(processes), processes
    for name, expected in EXPECTED.items():
        got = _probe(processes[name], make_run_env)
        assert set(got["secrets"]) == expected, f"{name}: {got['secrets']}"
        if name in ("beat", "flower"):
            assert not got["session_keys"], f"{name} holds the session keys"
    flower = _probe(processes["flower"], make_run_env)
    assert flower["database"] == "django.db.backends.dummy" and not flower["site_key"]


@pytest.mark.processes
def test_flower_runs_and_answers_with_none_of_the_secrets(make_run_env):
    """The real Flower, started by its Procfile line: it serves its pages without the database or the keys."""
    line = procfile()["flower"].replace("$FLOWER_PORT", make_run_env["FLOWER_PORT"])
    flower = subprocess.Popen(
        shlex.split(line), env=make_run_env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        auth = b64encode(make_run_env["FLOWER_BASIC_AUTH"].encode()).decode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{make_run_env['FLOWER_PORT']}/flower/workers", headers={"Authorization": f"Basic {auth}"}
        )
        deadline = time.monotonic() + 60
        while True:
            assert flower.poll() is None, flower.stdout.read().decode()[-3000:]
            try:
                with urllib.request.urlopen(request, timeout=5) as answer:
                    assert answer.status == 200
                    break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)
        held = dict(
            item.split("=", 1) for item in Path(f"/proc/{flower.pid}/environ").read_text().split("\0") if "=" in item
        )
        assert {name for name in SECRETS if held.get(name)} == EXPECTED["flower"]
    finally:
        flower.terminate()
        flower.wait(timeout=30)


def test_compose_gives_each_service_only_the_secrets_it_uses():
    """.env (every key of .env.example filled in) is handed to every service; `environment` blanks over it."""
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    dot_env = {
        line.split("=", 1)[0]: "set"
        for line in (ROOT / ".env.example").read_text().splitlines()
        if "=" in line and not line.startswith("#")
    }
    for name, expected in COMPOSE_EXPECTED.items():
        service = compose[name]
        env = {**(dot_env if service.get("env_file") == ".env" else {}), **(service.get("environment") or {})}
        got = {secret for secret in SECRETS if env.get(secret)}
        assert got == expected, f"{name}: {sorted(got)}"
    assert compose["beat"]["environment"]["STASHCAST_PROCESS"] == "beat"


LEFT_OUT_IN_PRODUCTION = {
    "beat": ("STASHCAST_SESSION_KEYS", "TELEGRAM_API_HASH"),
    "flower": ("STASHCAST_SESSION_KEYS", "TELEGRAM_API_HASH", "DATABASE_URL", "DJANGO_SECRET_KEY", "STORAGE_URL"),
}


@pytest.mark.processes  # beat or Flower started in a process of its own
@pytest.mark.parametrize("process", LEFT_OUT_IN_PRODUCTION)
def test_beat_and_flower_start_in_production_without_what_they_are_not_given(tmp_path, process):
    env = {key: value for key, value in os.environ.items() if key not in LEFT_OUT_IN_PRODUCTION[process]}
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        DJANGO_ALLOWED_HOSTS="stash.example.com",
        STASHCAST_PROCESS=process,
        TELEGRAM_BACKEND="telethon",
        TELEGRAM_API_ID="12345",
        STASHCAST_VAR_DIR=str(tmp_path),
    )
    if process == "beat":
        env["DJANGO_SECRET_KEY"] = "a-long-production-secret-key-0123456789-abcdefghijklmnopqrstuvwxyz"
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from config.celery_app import app; app.loader.import_default_modules(); print('started')",
        ],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "started" in done.stdout, done.stderr[-2000:]
