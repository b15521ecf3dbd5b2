"""The beat schedule, every periodic task in one place (synced to the database by django-celery-beat)."""

from config.settings.ingestion import CATALOG_AUDIT_HOURS, INGEST_INTERVAL_MINUTES
from config.settings.operations import BEAT_HEARTBEAT_SECONDS
from config.settings.runs import RUNS_REAP_EVERY_SECONDS
from core import task_names

CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_BEAT_SCHEDULE = {
    # Runs: reap the dead, resend the lost.
    "reap-stale-runs": {"task": task_names.RUNS_REAP_ALL, "schedule": float(RUNS_REAP_EVERY_SECONDS)},
    # Ingestion
    "ingestion-cycle": {"task": task_names.INGESTION_CYCLE_START, "schedule": 60.0 * INGEST_INTERVAL_MINUTES},
    "ingestion-recover": {"task": task_names.INGESTION_RECOVER, "schedule": 3600.0},
    "channel-scans-purge": {"task": task_names.CHANNEL_SCANS_PURGE, "schedule": 86400.0},
    "catalog-audit": {"task": task_names.CATALOG_AUDIT, "schedule": 3600.0 * CATALOG_AUDIT_HOURS},
    "raw-files-purge": {"task": task_names.RAW_FILES_PURGE_EXPIRED, "schedule": 3600.0},
    # Reminders
    "reminder-media-purge": {"task": task_names.MEDIA_PURGE_UNUSED, "schedule": 3600.0},
    "reminder-runs-auto-resume": {"task": task_names.REMINDER_RUNS_AUTO_RESUME, "schedule": 60.0},
    "reminder-slots-catch-up": {
        "task": task_names.REMINDER_SLOTS_CATCH_UP,
        "schedule": 60.0,
        # the next one comes a minute later and does the same work
        "options": {"expires": 60},
    },
    "account-rests-end": {"task": task_names.ACCOUNT_RESTS_END, "schedule": 60.0},
    # Operations
    "beat-heartbeat": {
        "task": task_names.BEAT_HEARTBEAT,
        "schedule": float(BEAT_HEARTBEAT_SECONDS),
        # A tick stuck behind a backlog proves nothing once the next is due.
        "options": {"expires": BEAT_HEARTBEAT_SECONDS},
    },
    "notifications-purge": {"task": task_names.NOTIFICATIONS_PURGE, "schedule": 86400.0},
    "idempotent-requests-purge": {"task": task_names.IDEMPOTENT_REQUESTS_PURGE, "schedule": 3600.0},
    "audit-purge": {"task": task_names.AUDIT_PURGE, "schedule": 86400.0},
}
