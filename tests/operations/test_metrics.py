"""Metrics from real rows and real Redis lists; alerts on the dashboard; the JSON and Prometheus endpoints."""

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from accounts.models import AuthState, Chat, TelegramAccount
from core import health
from core.models import RunStatus
from core.runs import run_kinds
from core.tokens import api_token_create
from ingestion.models import Channel, IngestionRun, SkippedPackage, SkipReason
from operations import metrics
from packages.models import Package

pytestmark = pytest.mark.django_db

CLOSED_PORT_URL = "redis://127.0.0.1:1/0"
METRICS_TOKEN = "scrape-me-please-0123456789"


@pytest.fixture
def broker():
    """The test Redis database's queue lists, empty before and after."""
    client = health.broker_client()
    keys = [name + suffix for name in metrics.QUEUES for suffix in ("", "\x06\x163", "\x06\x166", "\x06\x169")]
    client.delete(*keys)
    yield client
    client.delete(*keys)


@pytest.fixture
def account():
    return TelegramAccount.objects.create(phone="+15550000001", auth_state=AuthState.AUTHENTICATED)


def make_run(account, *, status, claimed_ago=None, heartbeat_ago=None, took=None, created_ago=0) -> IngestionRun:
    now = timezone.now()
    run = IngestionRun.objects.create(account=account, status=status, created_at=now - timedelta(seconds=created_ago))
    fields = {}
    if claimed_ago is not None:
        fields["claimed_at"] = now - timedelta(seconds=claimed_ago)
        fields["heartbeat_at"] = now - timedelta(seconds=heartbeat_ago if heartbeat_ago is not None else claimed_ago)
    if took is not None:
        fields["finished_at"] = fields["claimed_at"] + timedelta(seconds=took)
    IngestionRun.objects.filter(pk=run.pk).update(**fields)
    return run


def ingestion_metrics() -> metrics.RunKindMetrics:
    return next(kind for kind in metrics.run_kind_metrics(now=timezone.now()) if kind.key == "ingestion_run")


def test_runs_are_counted_per_kind_with_stuck_ones_and_the_24_hour_average(account, settings):
    settings.WORK_STALE_AFTER_SECONDS = 300
    make_run(account, status=RunStatus.QUEUED, created_ago=600)
    make_run(account, status=RunStatus.QUEUED)
    make_run(account, status=RunStatus.RUNNING, claimed_ago=1800, heartbeat_ago=5)
    make_run(account, status=RunStatus.RUNNING, claimed_ago=900, heartbeat_ago=310)  # stuck
    make_run(account, status=RunStatus.SUCCESS, claimed_ago=3600, took=100)
    make_run(account, status=RunStatus.FAILED, claimed_ago=7200, took=300)
    make_run(account, status=RunStatus.PAUSED, claimed_ago=600, took=50)
    make_run(account, status=RunStatus.SUCCESS, claimed_ago=2 * 86400, took=9999)  # ended before the window

    kind = ingestion_metrics()

    assert (kind.queued, kind.running, kind.stuck, kind.paused) == (2, 2, 1, 1)
    assert (kind.finished_24h, kind.failed_24h) == (3, 1)
    assert kind.average_seconds_24h == pytest.approx(150, abs=0.5)
    assert kind.longest_running_seconds == pytest.approx(1800, abs=5)
    assert kind.oldest_queued_seconds == pytest.approx(600, abs=5)
    assert kind.label == "Ingestion runs"


def test_every_registered_kind_of_run_is_reported():
    reported = {kind.key for kind in metrics.run_kind_metrics(now=timezone.now())}

    assert reported == {str(kind.model._meta.verbose_name).replace(" ", "_") for kind in run_kinds()}
    assert "ingestion_run" in reported


def test_without_runs_there_is_no_average(account):
    kind = ingestion_metrics()

    assert (kind.queued, kind.running, kind.stuck, kind.average_seconds_24h) == (0, 0, 0, None)


def test_queue_backlog_is_the_length_of_each_queue_list_on_the_broker(broker):
    broker.rpush("ingest", "a", "b", "c")
    broker.rpush("fanout", "a")
    broker.rpush("default\x06\x163", "a", "b")  # a prioritised message of the default queue

    backlog = {queue.name: queue.waiting for queue in metrics.queue_backlog()}

    assert backlog == {"ingest": 3, "fanout": 1, "default": 2}


def test_packages_per_day_covers_14_days_with_zeros():
    now = timezone.now()
    for index, days_ago in enumerate([0, 1, 1, 13, 14]):
        Package.objects.create(
            content_hash=f"{index:064d}",
            file_name=f"p{index}.zip",
            file_size=1,
            archive_type="zip",
            created_at=now - timedelta(days=days_ago),
        )

    days = metrics.packages_per_day(now=now)

    assert len(days) == 14 and days[-1].day == timezone.localdate(now)
    assert [day.count for day in days] == [1] + [0] * 11 + [2, 1]


def test_skipped_packages_by_reason_and_accounts_by_state():
    chat = Chat.objects.create(telegram_id=1001, title="Models A", type="channel")
    channel = Channel.objects.create(chat=chat, is_active=True)
    for message_id, reason in enumerate([SkipReason.MISSING_PART, SkipReason.MISSING_PART, SkipReason.SIZE_LIMIT]):
        SkippedPackage.objects.create(channel=channel, message_id=message_id, file_name="x.zip", reason=reason)
    TelegramAccount.objects.create(phone="+15550000002", auth_state=AuthState.EXPIRED)
    TelegramAccount.objects.create(phone="+15550000003", auth_state=AuthState.EXPIRED)

    skipped = {item.reason: item.count for item in metrics.skipped_by_reason()}
    states = {item.state: item.count for item in metrics.accounts_by_state()}

    assert skipped == {"MISSING_PART": 2, "SIZE_LIMIT": 1}
    assert states[AuthState.EXPIRED] == 2 and states[AuthState.AUTHENTICATED] == 0


# Alerts ----------------------------------------------------------------------------------------------------


def test_a_calm_stack_shows_no_alert(admin_client, broker, account):
    html = admin_client.get(reverse("dashboard")).content.decode()

    assert "alert-banner" not in html


def test_alerts_appear_on_the_dashboard_and_the_operations_page(admin_client, broker, account, settings):
    settings.ALERT_QUEUE_BACKLOG = 2
    settings.ALERT_PROCESSING_SECONDS = 60
    broker.rpush("ingest", "a", "b", "c")
    make_run(account, status=RunStatus.RUNNING, claimed_ago=300, heartbeat_ago=1)
    TelegramAccount.objects.create(phone="+15550000002", display_name="Banned Bob", auth_state=AuthState.RESTRICTED)
    TelegramAccount.objects.create(phone="+15550000003", display_name="Old Olga", auth_state=AuthState.EXPIRED)
    chat = Chat.objects.create(telegram_id=1001, title="Models A", type="channel")
    Channel.objects.create(chat=chat, is_active=True, last_error="Reader A: CHANNEL_PRIVATE")

    dashboard = admin_client.get(reverse("dashboard")).content.decode()
    operations = admin_client.get(reverse("operations")).content.decode()

    for html in (dashboard, operations):
        assert "3 tasks waiting in the ingest queue" in html
        assert "Ingestion runs: one has been running for 5 min" in html
        assert "Account Banned Bob is restricted by Telegram" in html
        assert "Account Old Olga needs a new login" in html
        assert "Channel Models A is unreachable" in html and "Reader A: CHANNEL_PRIVATE" in html
    assert dashboard.index("restricted by Telegram") < dashboard.index("tasks waiting"), "errors come first"


def test_several_unusable_accounts_are_one_alert_each_way(broker):
    for number, state in enumerate([AuthState.RESTRICTED, AuthState.RESTRICTED, AuthState.EXPIRED, AuthState.EXPIRED]):
        TelegramAccount.objects.create(phone=f"+1555000001{number}", display_name=f"User {number}", auth_state=state)
    TelegramAccount.objects.create(phone="+15550000020", auth_state=AuthState.EXPIRED, is_active=False)

    alerts = {alert.key: alert for alert in metrics.metrics_collect().alerts}

    restricted, expired = alerts["accounts-restricted"], alerts["accounts-expired"]
    assert (restricted.title, restricted.message) == (
        "2 accounts are restricted by Telegram",
        "User 0, User 1: stopped until the restriction is lifted.",
    )
    assert (expired.title, expired.severity) == ("2 accounts need a new login", "error")
    assert expired.message.startswith("User 2, User 3: "), "an account switched off is not asked to log in"


def test_an_average_above_the_threshold_alerts_too(account, broker, settings):
    settings.ALERT_PROCESSING_SECONDS = 60
    make_run(account, status=RunStatus.SUCCESS, claimed_ago=3600, took=120)

    alerts = metrics.metrics_collect().alerts

    assert [alert.title for alert in alerts] == ["Ingestion runs take 2 min on average (24 h)"]


def test_a_broker_that_does_not_answer_is_an_alert_not_an_error(admin_client, settings):
    settings.CELERY_BROKER_URL = CLOSED_PORT_URL
    settings.REDIS_URL = CLOSED_PORT_URL

    dashboard = admin_client.get(reverse("dashboard"))
    operations = admin_client.get(reverse("operations"))

    assert dashboard.status_code == operations.status_code == 200
    assert "Redis (the Celery broker) does not answer" in dashboard.content.decode()
    assert "The broker did not answer" in operations.content.decode()


def test_the_dashboard_links_to_flower_and_operations(admin_client):
    html = admin_client.get(reverse("dashboard")).content.decode()

    assert 'href="/flower/" target="_blank" rel="noopener" title="Celery workers' in html
    assert "Open Flower" in html
    assert f'href="{reverse("operations")}"' in html


def test_the_operations_page_shows_the_numbers_and_refreshes_its_body(admin_client, broker, account):
    make_run(account, status=RunStatus.QUEUED)
    broker.rpush("fanout", "a", "b")

    page = admin_client.get(reverse("operations")).content.decode()
    body = admin_client.get(reverse("operations"), headers={"HX-Request": "true"}).content.decode()

    assert "<html" in page and 'aria-current="page">Operations</a>' in page
    assert "<html" not in body and 'id="operations-body"' in body and 'hx-trigger="every 15s"' in body
    assert 'data-kind="ingestion_run"' in body and 'data-queue="fanout"' in body
    assert "Packages per day" in body and "Skipped by reason" in body


# Endpoints -------------------------------------------------------------------------------------------------


def test_api_metrics_needs_a_login_or_a_token(client, admin_user, broker, account, settings):
    settings.METRICS_TOKEN = METRICS_TOKEN
    make_run(account, status=RunStatus.QUEUED)
    _, token = api_token_create(owner=admin_user, name="scraper", scope="read")

    assert client.get("/api/metrics/").status_code in (401, 403)
    assert client.get("/api/metrics/", headers={"Authorization": "Bearer wrong-token-0123456789"}).status_code in (
        401,
        403,
    )
    by_token = client.get("/api/metrics/", headers={"Authorization": f"Token {token}"})
    by_bearer = client.get("/api/metrics/", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    client.force_login(admin_user)
    by_session = client.get("/api/metrics/")

    for response in (by_token, by_bearer, by_session):
        assert response.status_code == 200
    data = by_session.json()
    kind = next(kind for kind in data["runs"] if kind["kind"] == "ingestion_run")
    assert kind["queued"] == 1
    assert {queue["name"] for queue in data["queues"]} == {"ingest", "fanout", "default"}
    assert len(data["packages_per_day"]) == 14
    assert {"accounts_by_state", "skipped_by_reason", "alerts", "beat", "notifications_unread"} <= set(data)


def test_a_bearer_token_is_refused_while_metrics_token_is_unset(client, settings):
    settings.METRICS_TOKEN = ""

    assert client.get("/api/metrics/", headers={"Authorization": "Bearer "}).status_code in (401, 403)
    assert client.get("/metrics", headers={"Authorization": "Bearer "}).status_code == 401


def test_prometheus_text_needs_a_login_or_a_token(client, admin_user, broker, account, settings):
    settings.METRICS_TOKEN = METRICS_TOKEN
    make_run(account, status=RunStatus.QUEUED)
    make_run(account, status=RunStatus.QUEUED)
    broker.rpush("ingest", "a")
    _, token = api_token_create(owner=admin_user, name="scraper", scope="read")

    anonymous = client.get("/metrics")
    wrong = client.get("/metrics", headers={"Authorization": "Bearer wrong-token-0123456789"})
    by_bearer = client.get("/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"})
    by_token = client.get("/metrics", headers={"Authorization": f"Token {token}"})
    client.force_login(admin_user)
    by_session = client.get("/metrics")

    assert anonymous.status_code == wrong.status_code == 401
    assert anonymous["WWW-Authenticate"].startswith("Bearer")
    for response in (by_bearer, by_token, by_session):
        assert response.status_code == 200
        assert response["Content-Type"].startswith("text/plain")
    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(by_session.content.decode())
        for sample in family.samples
    }
    assert samples[("stashcast_runs", (("kind", "ingestion_run"), ("state", "queued")))] == 2
    assert samples[("stashcast_queue_backlog", (("queue", "ingest"),))] == 1
    assert samples[("stashcast_broker_up", ())] == 1
    assert samples[("stashcast_accounts", (("state", "authenticated"),))] == 1
