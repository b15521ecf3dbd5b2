"""Operations: metrics, alerts, health, notifications and Flower (operations/metrics.py, core/health.py)."""

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.env import envint, envstr, var_dir
from config.settings.environment import BASE_DIR

# Alert when a run has been running (or runs took on average over 24 h) longer than this.
ALERT_PROCESSING_SECONDS = envint("ALERT_PROCESSING_SECONDS", 3600, minimum=1)
# Alert when more tasks than this wait in one Celery queue.
ALERT_QUEUE_BACKLOG = envint("ALERT_QUEUE_BACKLOG", 100, minimum=0)
# `Authorization: Bearer <METRICS_TOKEN>` may read /metrics and /api/metrics/ (e.g. Prometheus); empty: off.
METRICS_TOKEN = envstr("METRICS_TOKEN", "")
if METRICS_TOKEN and len(METRICS_TOKEN) < 16:
    raise ImproperlyConfigured("METRICS_TOKEN must be at least 16 characters (or empty to turn it off).")
BEAT_HEARTBEAT_SECONDS = 30
# /healthz answers 503 once beat's last tick is older than this.
HEALTH_BEAT_MAX_AGE_SECONDS = envint("HEALTH_BEAT_MAX_AGE_SECONDS", 300, minimum=60)
# Where `make run`'s process manager keeps each process's state and restarts (core/processes.py): the health
# strip reads it. Absent under Compose.
STACK_PROCESSES_FILE = Path(envstr("STACK_PROCESSES_FILE", str(var_dir(BASE_DIR) / "supervisor" / "processes.json")))
# Read notifications are deleted this many days after they were last raised.
NOTIFICATION_RETENTION_DAYS = envint("NOTIFICATION_RETENTION_DAYS", 30, minimum=1)
# A POST's Idempotency-Key (core.idempotency) answers its retries this long.
IDEMPOTENCY_KEEP_HOURS = envint("IDEMPOTENCY_KEEP_HOURS", 24, minimum=1)

# Where the console's /flower/ proxy finds Flower (run with --url_prefix=flower), and the basic auth secret
# only the proxy sends (core/flower.py). Flower itself is never published.
FLOWER_URL = envstr("FLOWER_URL", "http://127.0.0.1:5555/")
FLOWER_BASIC_AUTH = envstr("FLOWER_BASIC_AUTH", "")

# The audit trail (core/audit.py): entries older than this are purged daily.
AUDIT_KEEP_DAYS = envint("AUDIT_KEEP_DAYS", 365, minimum=1)
# Rows one entry lists; a task touching more counts the rest.
AUDIT_MAX_CHANGES = envint("AUDIT_MAX_CHANGES", 200, minimum=1)
