"""Is the stack alive: the database answers, Redis answers, the object store's bucket answers (when files
are kept there), and beat ticked recently.

Beat sends `core.tasks.beat_heartbeat` every BEAT_HEARTBEAT_SECONDS; a worker on the `default` queue
writes Redis's own clock into BEAT_KEY. So a fresh tick proves beat, the broker and a default worker
all work, and every machine compares against one clock (Redis's), whatever their own clocks say.
"""

from dataclasses import dataclass
from functools import cache

import redis
from django.conf import settings
from django.db import connection

from config.storage import ObjectStore, object_store_parse

BEAT_KEY = "stashcast:beat:last-tick"
# Beat counts as late after missing a few ticks in a row.
BEAT_LATE_AFTER_TICKS = 3


@cache
def _client(url: str) -> redis.Redis:
    # Short timeouts: a page or /healthz must answer quickly when Redis is down.
    return redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=2, health_check_interval=30)


@cache
def _bucket_client(store: ObjectStore):
    # Short timeouts and no retries, as for Redis: /healthz must answer quickly when the store is down.
    return store.client(connect_timeout=1, read_timeout=2, retries={"max_attempts": 1})


def storage_check() -> str:
    """ "local" (files on this machine's disk), "ok" (the bucket answers), or raises what the store said."""
    if not settings.STORAGE_URL:
        return "local"
    store = object_store_parse(settings.STORAGE_URL)
    _bucket_client(store).head_bucket(Bucket=store.bucket)
    return "ok"


def redis_client() -> redis.Redis:
    return _client(settings.REDIS_URL)


def broker_client() -> redis.Redis:
    return _client(settings.CELERY_BROKER_URL)


def redis_now(client: redis.Redis) -> float:
    seconds, microseconds = client.time()
    return seconds + microseconds / 1_000_000


def beat_tick() -> float:
    """Record that beat ticked (now, by Redis's clock); returns the time recorded."""
    client = redis_client()
    now = redis_now(client)
    client.set(BEAT_KEY, repr(now))
    return now


@dataclass(frozen=True)
class BeatStatus:
    state: str  # "ok" | "late"
    age_seconds: float | None  # None: beat never ticked on this Redis
    down: bool  # never ticked, or late by more than HEALTH_BEAT_MAX_AGE_SECONDS


def beat_status(client: redis.Redis | None = None) -> BeatStatus:
    """Raises redis.RedisError when Redis cannot be asked."""
    client = client or redis_client()
    raw = client.get(BEAT_KEY)
    age = max(0.0, redis_now(client) - float(raw)) if raw is not None else None
    late_after = settings.BEAT_HEARTBEAT_SECONDS * BEAT_LATE_AFTER_TICKS
    state = "ok" if age is not None and age <= late_after else "late"
    down = age is None or age > settings.HEALTH_BEAT_MAX_AGE_SECONDS
    return BeatStatus(state=state, age_seconds=None if age is None else round(age, 1), down=down)


@dataclass(frozen=True)
class HealthReport:
    database: str  # "ok" | "error"
    redis: str  # "ok" | "error"
    storage: str  # "ok" | "error" | "local" (no object store: files on the local disk)
    beat: str  # "ok" | "late" | "unknown" (Redis down)
    beat_age_seconds: float | None
    errors: list[str]
    healthy: bool

    def as_dict(self) -> dict:
        return {
            "database": self.database,
            "redis": self.redis,
            "storage": self.storage,
            "beat": self.beat,
            "beat_age_seconds": self.beat_age_seconds,
            "errors": self.errors,
        }


def health_check(*, beat_required: bool = True) -> HealthReport:
    """beat_required=False still reports beat but leaves it out of `healthy` (compose's web check: beat
    starts only once web is healthy, so web's health must not wait for beat)."""
    errors = []
    database = "ok"
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:  # any driver error means "down"; the text says which
        database = "error"
        errors.append(f"database: {exc.__class__.__name__}: {exc}")
    redis_state, beat, beat_age, beat_down = "ok", "unknown", None, False
    try:
        client = redis_client()
        client.ping()
        status = beat_status(client)
        beat, beat_age, beat_down = status.state, status.age_seconds, status.down
    except redis.RedisError as exc:
        redis_state = "error"
        errors.append(f"redis: {exc.__class__.__name__}: {exc}")
    try:
        storage = storage_check()
    except Exception as exc:  # boto's errors have no common base with its connection errors
        storage = "error"
        errors.append(f"storage: {exc.__class__.__name__}: {exc}")
    if beat_down:
        since = "never ticked" if beat_age is None else f"last ticked {beat_age:.0f} s ago"
        errors.append(f"beat: {since} (limit {settings.HEALTH_BEAT_MAX_AGE_SECONDS} s)")
    return HealthReport(
        database=database,
        redis=redis_state,
        storage=storage,
        beat=beat,
        beat_age_seconds=beat_age,
        errors=errors,
        healthy=database == "ok" and redis_state == "ok" and storage != "error" and not (beat_down and beat_required),
    )
