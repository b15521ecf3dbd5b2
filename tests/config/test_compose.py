"""docker-compose.yml stays valid and keeps the production shape (DESIGN.md, "The two commands")."""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
APP_SERVICES = ("web", "worker-ingest", "worker-fanout", "worker", "beat", "flower", "bot")


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
        # Flower stores nothing and is not given the store's password (tests/config/test_least_secrets.py).
        assert name == "flower" or "@minio:9000/stashcast" in services[name]["environment"]["STORAGE_URL"]
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


def _schema_errors(compose_file: Path) -> str:
    """The Compose Specification's JSON schema (as check-jsonschema vendors it) applied to one file; "" when valid."""
    result = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec", str(compose_file)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return "" if result.returncode == 0 else result.stdout + result.stderr


def test_compose_file_follows_the_compose_specification():
    assert _schema_errors(ROOT / "docker-compose.yml") == ""


@pytest.mark.parametrize(
    "mistake",
    [
        lambda doc: doc["services"]["web"].update(healthchek=doc["services"]["web"].pop("healthcheck")),
        lambda doc: doc["services"]["beat"]["depends_on"]["postgres"].update(condition="service_ready"),
        lambda doc: doc["services"]["worker"].update(restart=["always"]),
    ],
    ids=["misspelled key", "unknown depends_on condition", "restart as a list"],
)
def test_the_schema_check_catches_a_broken_compose_file(tmp_path, mistake):
    doc = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    mistake(doc)
    broken = tmp_path / "docker-compose.yml"
    broken.write_text(yaml.safe_dump(doc))
    assert _schema_errors(broken) != ""


def test_flower_is_reached_only_through_the_console():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    flower = services["flower"]
    assert "ports" not in flower, "Flower must not be published: web's /flower/ proxy is the one door"
    assert "--url_prefix=flower" in flower["command"]
    assert flower["environment"]["FLOWER_BASIC_AUTH"].startswith("${FLOWER_BASIC_AUTH:?")
    assert services["web"]["environment"]["FLOWER_URL"] == "http://flower:5555/"
    procfile = (ROOT / "Procfile").read_text()
    assert "--address=127.0.0.1" in procfile and "--url_prefix=flower" in procfile


# Secrets Flower's process never uses: with them it could read every Telegram session in the database.
NOT_FOR_FLOWER = ("STASHCAST_SESSION_KEYS", "STASHCAST_ADMIN_PASSWORD", "TELEGRAM_API_HASH", "METRICS_TOKEN")


def test_flower_gets_none_of_the_secrets_it_does_not_use():
    flower = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["flower"]
    assert flower["environment"]["STASHCAST_PROCESS"] == "flower"
    for name in NOT_FOR_FLOWER:
        assert flower["environment"].get(name) == "", f"compose hands {name} (from .env) to Flower"
    flower_line = next(line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("flower:"))
    for name in NOT_FOR_FLOWER:
        assert f"-u {name}" in flower_line, f"make run hands {name} to Flower"


def test_the_bot_is_a_process_of_its_own_in_compose_and_the_procfile():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert services["bot"]["command"] == "python manage.py run_bot"
    (line,) = [line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("bot:")]
    assert line.endswith(" python manage.py run_bot")
