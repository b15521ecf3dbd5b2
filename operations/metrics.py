"""Operations metrics and alerts: real counts from the database and the broker, nothing cached.
The dashboard, /operations/, /api/metrics/ and /metrics read them.

Runs are counted for every kind registered with core.runs.run_kind_register (ingestion runs, reminder
runs, ...). The Celery backlog is the length of each queue's list on the Redis broker: tasks waiting
for a worker (tasks a worker has taken are not in it).
"""

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

import redis
from django.conf import settings
from django.db.models import Avg, Count, DurationField, ExpressionWrapper, F, Min, Q
from django.db.models.functions import TruncDate
from django.urls import reverse
from django.utils import timezone

from accounts.models import AuthState, TelegramAccount
from accounts.selectors import AccountHealth, account_health
from core import health
from core.formatting import format_duration
from core.models import Notification, RunStatus
from core.runs import run_kinds, runs_stuck
from ingestion.models import Channel, IngestionRun, SkippedPackage, SkipReason
from packages.models import Package

QUEUES = ("ingest", "fanout", "default")
# kombu's Redis transport keeps a queue's prioritised messages in lists named queue + SEP + priority.
_PRIORITY_SEP = "\x06\x16"
_PRIORITY_STEPS = (3, 6, 9)
AVERAGE_WINDOW = timedelta(hours=24)
PACKAGES_DAYS = 14
# How many names an alert spells out before "and N more".
ALERT_NAMES = 5


@dataclass(frozen=True)
class RunKindMetrics:
    key: str  # "ingestion_run"
    label: str  # "Ingestion runs"
    queued: int
    running: int
    stuck: int
    paused: int
    finished_24h: int
    failed_24h: int
    average_seconds_24h: float | None
    longest_running_seconds: float | None
    oldest_queued_seconds: float | None


@dataclass(frozen=True)
class QueueBacklog:
    name: str
    waiting: int


@dataclass(frozen=True)
class StateCount:
    state: str
    label: str
    count: int


@dataclass(frozen=True)
class DayCount:
    day: date
    count: int


@dataclass(frozen=True)
class ReasonCount:
    reason: str
    label: str
    count: int


@dataclass(frozen=True)
class Alert:
    key: str
    severity: str  # "warning" | "error"
    title: str
    message: str
    url: str = ""


@dataclass(frozen=True)
class AccountHealthMetrics:
    phone: str
    health: AccountHealth


@dataclass
class Metrics:
    generated_at: datetime
    runs: list[RunKindMetrics]
    queues: list[QueueBacklog] | None  # None: the broker did not answer
    broker_error: str
    accounts_by_state: list[StateCount]
    packages_per_day: list[DayCount]
    skipped_by_reason: list[ReasonCount]
    notifications_unread: int
    beat: health.BeatStatus | None
    alerts: list[Alert] = field(default_factory=list)
    account_health: list[AccountHealthMetrics] = field(default_factory=list)
    # Queued runs that wait for their delayed start (IngestionRun.starts_at): a worker holds their task until then,
    # so no queue counts it.
    runs_delayed: int = 0

    @property
    def packages_max_per_day(self) -> int:
        return max((item.count for item in self.packages_per_day), default=0)

    @property
    def runs_running(self) -> int:
        return sum(kind.running for kind in self.runs)

    @property
    def runs_queued(self) -> int:
        return sum(kind.queued for kind in self.runs)

    @property
    def runs_stuck(self) -> int:
        return sum(kind.stuck for kind in self.runs)

    @property
    def queues_waiting(self) -> int:
        return sum(queue.waiting for queue in self.queues or [])

    @property
    def queue_max(self) -> int:
        return max((queue.waiting for queue in self.queues or []), default=0)

    @property
    def skipped_total(self) -> int:
        return sum(item.count for item in self.skipped_by_reason)


def _seconds(value: timedelta | None) -> float | None:
    return None if value is None else round(value.total_seconds(), 1)


def _age(now: datetime, since: datetime | None) -> float | None:
    return None if since is None else round(max(0.0, (now - since).total_seconds()), 1)


def run_kind_metrics(*, now: datetime) -> list[RunKindMetrics]:
    """One aggregate query per kind of run."""
    since = now - AVERAGE_WINDOW
    ended = Q(finished_at__gte=since)
    results = []
    for kind in run_kinds():
        model = kind.model
        numbers = model.objects.filter(
            Q(status__in=[RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.PAUSED]) | ended
        ).aggregate(
            queued=Count("pk", filter=Q(status=RunStatus.QUEUED)),
            running=Count("pk", filter=Q(status=RunStatus.RUNNING)),
            stuck=Count("pk", filter=runs_stuck(now=now)),
            paused=Count("pk", filter=Q(status=RunStatus.PAUSED)),
            finished=Count("pk", filter=ended & ~Q(status__in=[RunStatus.QUEUED, RunStatus.RUNNING])),
            failed=Count("pk", filter=ended & Q(status=RunStatus.FAILED)),
            average=Avg(
                ExpressionWrapper(F("finished_at") - F("claimed_at"), output_field=DurationField()),
                filter=ended & Q(claimed_at__isnull=False) & ~Q(status__in=[RunStatus.QUEUED, RunStatus.RUNNING]),
            ),
            running_since=Min("claimed_at", filter=Q(status=RunStatus.RUNNING)),
            queued_since=Min("created_at", filter=Q(status=RunStatus.QUEUED)),
        )
        verbose = str(model._meta.verbose_name)
        results.append(
            RunKindMetrics(
                key=verbose.replace(" ", "_"),
                label=str(model._meta.verbose_name_plural).capitalize(),
                queued=numbers["queued"],
                running=numbers["running"],
                stuck=numbers["stuck"],
                paused=numbers["paused"],
                finished_24h=numbers["finished"],
                failed_24h=numbers["failed"],
                average_seconds_24h=_seconds(numbers["average"]),
                longest_running_seconds=_age(now, numbers["running_since"]),
                oldest_queued_seconds=_age(now, numbers["queued_since"]),
            )
        )
    return results


def queue_backlog(client: redis.Redis | None = None) -> list[QueueBacklog]:
    """Tasks waiting in each Celery queue on the broker. Raises redis.RedisError when it is down."""
    client = client or health.broker_client()
    pipe = client.pipeline(transaction=False)
    for queue in QUEUES:
        pipe.llen(queue)
        for step in _PRIORITY_STEPS:
            pipe.llen(f"{queue}{_PRIORITY_SEP}{step}")
    lengths = pipe.execute()
    per_queue = len(_PRIORITY_STEPS) + 1
    return [
        QueueBacklog(name=queue, waiting=sum(lengths[index * per_queue : (index + 1) * per_queue]))
        for index, queue in enumerate(QUEUES)
    ]


def accounts_by_state() -> list[StateCount]:
    counts = dict(TelegramAccount.objects.values_list("auth_state").annotate(count=Count("pk")).order_by())
    return [StateCount(state=value, label=label, count=counts.get(value, 0)) for value, label in AuthState.choices]


def packages_per_day(*, now: datetime, days: int = PACKAGES_DAYS) -> list[DayCount]:
    """Packages ingested per day (UTC), the last `days` days including today, oldest first."""
    today = timezone.localdate(now)
    first = today - timedelta(days=days - 1)
    start = timezone.make_aware(datetime.combine(first, datetime.min.time()))
    counts = dict(
        Package.objects.filter(created_at__gte=start)
        .annotate(day=TruncDate("created_at"))
        .values_list("day")
        # Counting created_at, not pk, lets PostgreSQL answer from the created_at index alone.
        .annotate(count=Count("created_at"))
        .order_by()
    )
    days_shown = [first + timedelta(days=offset) for offset in range(days)]
    return [DayCount(day=day, count=counts.get(day, 0)) for day in days_shown]


def skipped_by_reason() -> list[ReasonCount]:
    counts = dict(SkippedPackage.objects.values_list("reason").annotate(count=Count("pk")).order_by())
    return [
        ReasonCount(reason=value, label=label, count=counts[value])
        for value, label in SkipReason.choices
        if counts.get(value)
    ]


def account_health_all() -> list[AccountHealthMetrics]:
    """Every logged-in, switched-on account's sending health."""
    accounts = TelegramAccount.objects.filter(is_active=True).order_by("phone")
    return [AccountHealthMetrics(phone=account.phone, health=account_health(account=account)) for account in accounts]


def metrics_collect() -> Metrics:
    now = timezone.now()
    queues, broker_error, beat = None, "", None
    try:
        queues = queue_backlog()
        beat = health.beat_status()
    except redis.RedisError as exc:
        broker_error = f"{exc.__class__.__name__}: {exc}"
    metrics = Metrics(
        generated_at=now,
        runs=run_kind_metrics(now=now),
        queues=queues,
        broker_error=broker_error,
        accounts_by_state=accounts_by_state(),
        packages_per_day=packages_per_day(now=now),
        skipped_by_reason=skipped_by_reason(),
        notifications_unread=Notification.objects.filter(read_at__isnull=True).count(),
        beat=beat,
        account_health=account_health_all() if queues is not None else [],  # the budget is read from Redis
        runs_delayed=IngestionRun.objects.filter(status=RunStatus.QUEUED, starts_at__gt=now).count(),
    )
    metrics.alerts = alerts_for(metrics)
    return metrics


def _names(items: list[str]) -> str:
    shown = ", ".join(items[:ALERT_NAMES])
    return shown if len(items) <= ALERT_NAMES else f"{shown} and {len(items) - ALERT_NAMES} more"


def alerts_for(metrics: Metrics) -> list[Alert]:
    """What needs the operator now, worst first. Thresholds: ALERT_PROCESSING_SECONDS, ALERT_QUEUE_BACKLOG."""
    alerts: list[Alert] = []
    operations = reverse("operations")
    if metrics.queues is None:
        alerts.append(
            Alert(
                key="broker-down",
                severity="error",
                title="Redis (the Celery broker) does not answer",
                message=f"No task can be queued or run until it is back. {metrics.broker_error}",
                url=operations,
            )
        )
    limit = settings.ALERT_PROCESSING_SECONDS
    for kind in metrics.runs:
        slow = ""
        if kind.longest_running_seconds is not None and kind.longest_running_seconds > limit:
            slow = f"{kind.label}: one has been running for {format_duration(kind.longest_running_seconds)}"
        elif kind.average_seconds_24h is not None and kind.average_seconds_24h > limit:
            slow = f"{kind.label} take {format_duration(kind.average_seconds_24h)} on average (24 h)"
        if slow:
            alerts.append(
                Alert(
                    key=f"processing-{kind.key}",
                    severity="warning",
                    title=slow,
                    message=f"Above the {format_duration(limit)} alert threshold (ALERT_PROCESSING_SECONDS).",
                    url=operations,
                )
            )
        if kind.stuck:
            alerts.append(
                Alert(
                    key=f"stuck-{kind.key}",
                    severity="warning",
                    title=f"{kind.label}: {kind.stuck} stuck (no heartbeat for {settings.WORK_STALE_AFTER_SECONDS} s)",
                    message="The reaper re-queues them within a minute; if they stay, check the workers in Flower.",
                    url=operations,
                )
            )
    for queue in metrics.queues or []:
        if queue.waiting > settings.ALERT_QUEUE_BACKLOG:
            alerts.append(
                Alert(
                    key=f"backlog-{queue.name}",
                    severity="warning",
                    title=f"{queue.waiting} tasks waiting in the {queue.name} queue",
                    message=(
                        f"Above the alert threshold of {settings.ALERT_QUEUE_BACKLOG} (ALERT_QUEUE_BACKLOG). "
                        f"Add workers for it: docker compose up --scale worker-{queue.name}=N."
                        if queue.name != "default"
                        else f"Above the alert threshold of {settings.ALERT_QUEUE_BACKLOG} (ALERT_QUEUE_BACKLOG). "
                        "Check that a worker consumes it."
                    ),
                    url=operations,
                )
            )
    unusable = list(
        TelegramAccount.objects.filter(
            is_active=True, auth_state__in=[AuthState.RESTRICTED, AuthState.EXPIRED]
        ).order_by("auth_state", "phone")
    )
    # (state, alert key, said of one account, said of several, what it means)
    account_alerts = [
        (
            AuthState.RESTRICTED,
            "accounts-restricted",
            "is restricted by Telegram",
            "are restricted by Telegram",
            "stopped until the restriction is lifted.",
        ),
        (
            AuthState.EXPIRED,
            "accounts-expired",
            "needs a new login",
            "need a new login",
            "the Telegram session expired or was revoked. Log in again.",
        ),
    ]
    for state, key, one, several, meaning in account_alerts:
        names = [str(account) for account in unusable if account.auth_state == state]
        if names:
            alerts.append(
                Alert(
                    key=key,
                    severity="error",
                    title=f"Account {names[0]} {one}" if len(names) == 1 else f"{len(names)} accounts {several}",
                    message=f"{_names(names)}: {meaning}",
                    url=reverse("accounts:list"),
                )
            )
    unreachable = list(
        Channel.objects.filter(is_active=True).exclude(last_error="").select_related("chat").order_by("chat__title")
    )
    if unreachable:
        only = unreachable[0] if len(unreachable) == 1 else None
        alerts.append(
            Alert(
                key="channels-unreachable",
                severity="warning",
                title=(
                    f"Channel {only.title} is unreachable" if only else f"{len(unreachable)} channels are unreachable"
                ),
                message=only.last_error if only else _names([channel.title for channel in unreachable]) + ".",
                url=reverse("ingestion:channel-detail", args=[only.pk]) if only else reverse("ingestion:channels"),
            )
        )
    # Only a beat that ticked and stopped: "never ticked" is a fresh install (or a test run); /healthz covers it.
    if metrics.beat is not None and metrics.beat.down and metrics.beat.age_seconds is not None:
        alerts.append(
            Alert(
                key="beat-late",
                severity="error",
                title="Celery beat stopped ticking",
                message=(
                    f"Last tick {format_duration(metrics.beat.age_seconds)} ago. Nothing scheduled runs (ingestion "
                    "cycles, reminders, the reaper) until beat and a worker on the default queue are back."
                ),
                url=operations,
            )
        )
    order = {"error": 0, "warning": 1}
    return sorted(alerts, key=lambda alert: order.get(alert.severity, 2))
