"""docker-compose.yml stays valid and keeps the production shape (DESIGN.md, "The two commands")."""

import secrets
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]
APP_SERVICES = ("web", "worker-ingest", "worker-fanout", "worker", "beat", "flower")


def _compose_command() -> list[str] | None:
    """`docker compose` (the plugin), else a standalone Compose v2; None when neither is here."""
    candidates = []
    if shutil.which("docker"):
        candidates.append(["docker", "compose"])
    if shutil.which("docker-compose"):
        candidates.append(["docker-compose"])
    for command in candidates:
        try:
            version = subprocess.run([*command, "version", "--short"], capture_output=True, text=True, timeout=30)
        except OSError:
            continue
        if version.returncode == 0 and version.stdout.strip().lstrip("v").startswith("2"):
            return command
    return None


def _filled_env(example: str, **overrides: str) -> str:
    """.env.example with its empty values filled in, as the operator is told to."""
    values = {
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "STASHCAST_SESSION_KEYS": Fernet.generate_key().decode(),
        "STASHCAST_ADMIN_PASSWORD": secrets.token_urlsafe(12),
        "POSTGRES_PASSWORD": secrets.token_hex(16),
        "MINIO_ROOT_PASSWORD": secrets.token_hex(16),
        "FLOWER_BASIC_AUTH": f"admin:{secrets.token_hex(8)}",
        **overrides,
    }
    lines = []
    for line in example.splitlines():
        key, sep, value = line.partition("=")
        if sep and not line.startswith("#") and key in values:
            line = f"{key}={values[key]}"
        lines.append(line)
    return "\n".join(lines) + "\n"


@pytest.fixture
def project(tmp_path) -> Path:
    for name in ("docker-compose.yml", "Dockerfile", ".dockerignore"):
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


@pytest.fixture
def compose():
    command = _compose_command()
    if command is None:
        pytest.skip("no Docker Compose v2 here (neither the `docker compose` plugin nor a `docker-compose` v2 binary)")
    return command


def test_env_example_names_every_secret_the_stack_needs():
    example = (ROOT / ".env.example").read_text()
    keys = {line.partition("=")[0] for line in example.splitlines() if "=" in line and not line.startswith("#")}
    for key in (
        "DJANGO_SECRET_KEY",
        "STASHCAST_SESSION_KEYS",
        "TELEGRAM_API_ID",
        "TELEGRAM_API_HASH",
        "FLOWER_BASIC_AUTH",
        "DJANGO_ALLOWED_HOSTS",
        "DJANGO_SECURE_SSL_REDIRECT",
        "POSTGRES_PASSWORD",
        "MINIO_ROOT_PASSWORD",
    ):
        assert key in keys, f".env.example does not document {key}"
    for secret in (
        "DJANGO_SECRET_KEY",
        "STASHCAST_SESSION_KEYS",
        "POSTGRES_PASSWORD",
        "MINIO_ROOT_PASSWORD",
        "FLOWER_BASIC_AUTH",
    ):
        assert f"\n{secret}=\n" in example, f"{secret} must be left empty in .env.example, never a usable value"


def test_compose_runs_every_process_from_one_production_image():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert {"postgres", "redis", *APP_SERVICES} <= set(services)
    assert services["postgres"]["image"].startswith("postgres:16")
    assert services["redis"]["image"].startswith("redis:7")
    assert "pg_isready" in str(services["postgres"]["healthcheck"]["test"])
    assert "ping" in services["redis"]["healthcheck"]["test"]
    images = {services[name]["image"] for name in APP_SERVICES}
    assert len(images) == 1, f"web, the workers, beat and flower must share one image, not {images}"
    for name in APP_SERVICES:
        assert services[name]["environment"]["DJANGO_SETTINGS_MODULE"] == "config.settings.production"
        assert "media:/data/media" in services[name]["volumes"]
    assert "DatabaseScheduler" in services["beat"]["command"]
    web = " ".join(services["web"]["command"])
    assert web.index("migrate") < web.index("gunicorn")
    assert "/healthz" in "".join(services["web"]["healthcheck"]["test"])


def test_every_process_keeps_media_and_raw_files_in_the_bundled_object_store():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert services["minio"]["image"].startswith("minio/minio:")
    web = " ".join(services["web"]["command"])
    assert web.index("storage_ensure") < web.index("gunicorn"), "web makes the bucket before anyone uses it"
    for name in APP_SERVICES:
        assert "@minio:9000/stashcast" in services[name]["environment"]["STORAGE_URL"]
        assert services[name]["depends_on"]["minio"]["condition"] == "service_healthy"


def test_each_queue_has_its_own_worker_service_to_scale():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    consumers = {}
    for name in ("worker-ingest", "worker-fanout", "worker"):
        command = services[name]["command"].split()
        assert "-E" in command, f"{name} must send task events for Flower"
        for queue in command[command.index("-Q") + 1].split(","):
            consumers.setdefault(queue, []).append(name)
        # `--scale` needs containers without a fixed name or host port.
        assert "container_name" not in services[name] and "ports" not in services[name]
    assert consumers == {"ingest": ["worker-ingest"], "fanout": ["worker-fanout"], "default": ["worker"]}


def test_compose_config_is_valid(compose, project):
    (project / ".env").write_text(_filled_env((ROOT / ".env.example").read_text()))
    result = subprocess.run([*compose, "config", "-q"], cwd=project, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and not result.stderr.strip(), result.stderr


def test_compose_refuses_to_run_flower_without_its_password(compose, project):
    (project / ".env").write_text(_filled_env((ROOT / ".env.example").read_text(), FLOWER_BASIC_AUTH=""))
    result = subprocess.run([*compose, "config", "-q"], cwd=project, capture_output=True, text=True, timeout=60)
    assert "FLOWER_BASIC_AUTH" in result.stderr


def test_flower_is_reached_only_through_the_console():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    flower = services["flower"]
    assert "ports" not in flower, "Flower must not be published: web's /flower/ proxy is the one door"
    assert "--url_prefix=flower" in flower["command"]
    assert flower["environment"]["FLOWER_BASIC_AUTH"].startswith("${FLOWER_BASIC_AUTH:?")
    assert services["web"]["environment"]["FLOWER_URL"] == "http://flower:5555/"
    procfile = (ROOT / "Procfile").read_text()
    assert "--address=127.0.0.1" in procfile and "--url_prefix=flower" in procfile
