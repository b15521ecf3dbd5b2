"""Celery: at-least-once delivery, so every unit of work is also claimed in the database (runs.py)."""

from config.env import envint
from config.settings.environment import REDIS_URL
from core import task_names

CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_SERIALIZER = "json"
CELERY_WORKER_SEND_TASK_EVENTS = True
CELERY_TASK_SEND_SENT_EVENT = True
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {
    task_names.INGESTION_RUN_EXECUTE: {"queue": "ingest"},
    # By name, not reminder_run_*: that glob also caught the one-minute reminder_runs_auto_resume, which then
    # waited on the fan-out queue behind long runs.
    task_names.REMINDER_RUN_EXECUTE: {"queue": "fanout"},
    task_names.PACKAGE_SEND_EXECUTE: {"queue": "fanout"},
}
# Above the longest task slice, or Redis redelivers a task that is still running.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": envint("CELERY_VISIBILITY_TIMEOUT", 4 * 3600, minimum=1),
    # How often workers look for unacknowledged tasks past the timeout (kombu: interval × throttle).
    "unacked_restore_interval": envint("CELERY_UNACKED_RESTORE_INTERVAL", 10, minimum=1),
    "unacked_restore_throttle": envint("CELERY_UNACKED_RESTORE_THROTTLE", 10, minimum=1),
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A Redis blip does not cancel a running fan-out or transfer: its work is claimed in the database, so a message
# redelivered after it finds that work done or still held.
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_TIMEZONE = "UTC"
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
