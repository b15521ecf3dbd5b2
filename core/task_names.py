"""Every Celery task's name, in one place: the beat schedule, the queue routes and tasks sent by name use these.

Strings, not imports of the task functions: settings read them before any app is loaded.
tests/core/test_task_names.py checks each one against Celery's registry.
"""

RUNS_REAP_ALL = "core.tasks.runs_reap_all"
BEAT_HEARTBEAT = "core.tasks.beat_heartbeat"
NOTIFICATIONS_PURGE = "core.tasks.notifications_purge"
IDEMPOTENT_REQUESTS_PURGE = "core.tasks.idempotent_requests_purge"
AUDIT_PURGE = "core.tasks.audit_purge"

ACCOUNT_RESTS_END = "accounts.tasks.account_rests_end"

INGESTION_CYCLE_START = "ingestion.tasks.ingestion_cycle_start"
INGESTION_RUN_EXECUTE = "ingestion.tasks.ingestion_run_execute"
INGESTION_RECOVER = "ingestion.tasks.ingestion_recover"
CHANNEL_SCANS_PURGE = "ingestion.tasks.channel_scans_purge"
CATALOG_AUDIT = "ingestion.tasks.catalog_audit"
CATALOG_REBUILD = "ingestion.tasks.catalog_rebuild"

RAW_FILES_PURGE_EXPIRED = "packages.tasks.raw_files_purge_expired"
PACKAGE_SEND_EXECUTE = "packages.tasks.package_send_execute"

REMINDER_FIRE = "reminders.tasks.reminder_fire"
REMINDER_RUN_EXECUTE = "reminders.tasks.reminder_run_execute"
REMINDER_RUNS_AUTO_RESUME = "reminders.tasks.reminder_runs_auto_resume"
REMINDER_SLOTS_CATCH_UP = "reminders.tasks.reminder_slots_catch_up"
MEDIA_PURGE_UNUSED = "reminders.tasks.media_purge_unused"

ALL = frozenset(value for name, value in dict(globals()).items() if name.isupper())
