"""/healthz: the database, Redis, the object store, and beat's heartbeat (core.health, core.tasks.beat_heartbeat)."""

import pytest
from django.db import OperationalError

from core import health, task_names
from core.tasks import beat_heartbeat

pytestmark = pytest.mark.django_db

CLOSED_PORT_URL = "redis://127.0.0.1:1/0"


@pytest.fixture(autouse=True)
def no_beat_tick():
    """No tick left over in the test Redis database, before or after."""
    health.redis_client().delete(health.BEAT_KEY)
    yield
    health.redis_client().delete(health.BEAT_KEY)


def tick_ago(seconds: float) -> None:
    client = health.redis_client()
    client.set(health.BEAT_KEY, repr(health.redis_now(client) - seconds))


def test_beat_sends_a_heartbeat_every_30_seconds(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["beat-heartbeat"]

    assert entry["task"] == task_names.BEAT_HEARTBEAT and entry["schedule"] == 30.0


def test_healthy_with_a_fresh_tick_and_no_login_needed(client, admin_client):
    beat_heartbeat()

    assert client.get("/healthz").json() == {"status": "ok"}
    response = admin_client.get("/healthz")

    assert response.status_code == 200
    data = response.json()
    assert (data["database"], data["redis"], data["beat"]) == ("ok", "ok", "ok")
    assert data["beat_age_seconds"] < 5 and data["errors"] == []
    assert "no-cache" in response["Cache-Control"] or "max-age=0" in response["Cache-Control"]


def test_a_few_missed_ticks_are_late_but_still_healthy(admin_client):
    tick_ago(120)

    response = admin_client.get("/healthz")

    assert response.status_code == 200 and response.json()["beat"] == "late"


def test_beat_late_by_more_than_5_minutes_is_unhealthy(admin_client, settings):
    settings.HEALTH_BEAT_MAX_AGE_SECONDS = 300
    tick_ago(301)

    response = admin_client.get("/healthz")

    assert response.status_code == 503
    data = response.json()
    assert (data["database"], data["redis"], data["beat"]) == ("ok", "ok", "late")
    assert any(error.startswith("beat: last ticked 301 s ago") for error in data["errors"])


def test_beat_that_never_ticked_is_unhealthy(admin_client):
    response = admin_client.get("/healthz")

    assert response.status_code == 503 and response.json()["beat"] == "late"
    assert "never ticked" in " ".join(response.json()["errors"])


def test_compose_asks_with_beat_optional_so_web_does_not_wait_for_beat(admin_client, settings):
    # Compose starts beat only once web is healthy: web's own check must not wait for beat's first tick.
    tick_ago(86400)

    optional = admin_client.get("/healthz?beat=optional")

    assert optional.status_code == 200 and optional.json()["beat"] == "late"
    assert admin_client.get("/healthz").status_code == 503


def test_beat_optional_still_fails_when_redis_is_down(client, settings):
    settings.REDIS_URL = CLOSED_PORT_URL

    assert client.get("/healthz?beat=optional").status_code == 503


def test_redis_unreachable_is_unhealthy(admin_client, settings):
    settings.REDIS_URL = CLOSED_PORT_URL

    response = admin_client.get("/healthz")

    assert response.status_code == 503
    data = response.json()
    assert (data["database"], data["redis"], data["beat"]) == ("ok", "error", "unknown")
    assert data["errors"][0].startswith("redis: ConnectionError")


def test_database_unreachable_is_unhealthy(admin_client, monkeypatch):
    class DownConnection:
        def cursor(self):
            raise OperationalError("connection refused")

    monkeypatch.setattr(health, "connection", DownConnection())
    beat_heartbeat()

    response = admin_client.get("/healthz")

    assert response.status_code == 503
    assert response.json()["database"] == "error" and response.json()["redis"] == "ok"


def test_files_on_the_local_disk_are_said_so(admin_client):
    beat_heartbeat()

    data = admin_client.get("/healthz").json()

    assert data["storage"] == "local" and data["errors"] == []


def test_the_object_stores_bucket_is_checked(admin_client, object_store):
    beat_heartbeat()

    response = admin_client.get("/healthz")

    assert response.status_code == 200 and response.json()["storage"] == "ok"


def test_a_missing_bucket_is_unhealthy_and_says_which(admin_client, object_store, settings):
    settings.STORAGE_URL = object_store.replace("/test-", "/gone-")
    beat_heartbeat()

    response = admin_client.get("/healthz")

    assert response.status_code == 503
    data = response.json()
    assert (data["database"], data["redis"], data["storage"]) == ("ok", "ok", "error")
    assert data["errors"][0].startswith("storage: ClientError") and "404" in data["errors"][0]


def test_an_unreachable_object_store_is_unhealthy(admin_client, settings):
    settings.STORAGE_URL = "s3+http://key:secret@127.0.0.1:1/bucket"
    beat_heartbeat()

    response = admin_client.get("/healthz")

    assert response.status_code == 503 and response.json()["storage"] == "error"
    assert response.json()["errors"][0].startswith("storage: EndpointConnectionError")


def test_healthz_only_answers_get(client):
    assert client.post("/healthz").status_code == 405


def test_the_operations_page_shows_health(admin_client):
    beat_heartbeat()

    html = admin_client.get("/operations/").content.decode()

    assert 'class="health-item health--ok"' in html and "ticked 0 s ago" in html


def test_a_beat_that_stopped_is_an_alert(admin_client, settings):
    settings.HEALTH_BEAT_MAX_AGE_SECONDS = 300
    tick_ago(900)

    html = admin_client.get("/").content.decode()

    assert "Celery beat stopped ticking" in html and "Last tick 15 min ago" in html


def test_strangers_get_the_status_alone_never_driver_errors(client, settings):
    settings.REDIS_URL = CLOSED_PORT_URL

    down = client.get("/healthz")

    assert down.status_code == 503 and down.json() == {"status": "error"}
    assert "127.0.0.1" not in down.content.decode()
    settings.REDIS_URL = settings.CELERY_BROKER_URL
    beat_heartbeat()
    assert client.get("/healthz").json() == {"status": "ok"}


def test_the_metrics_token_sees_the_details(client, settings):
    settings.METRICS_TOKEN = "a-token-of-16-chars-or-more"
    beat_heartbeat()

    response = client.get("/healthz", headers={"Authorization": "Bearer a-token-of-16-chars-or-more"})

    assert response.json()["status"] == "ok" and response.json()["redis"] == "ok"
