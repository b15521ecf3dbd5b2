"""Reminders' services, one module a job, all importable from here (`from reminders.services import X`):

- compose: the specs, media, reminders and their beat schedule;
- runs: firing a run and the operator's actions on it;
- summaries: what a stopped run says, and the notification it raises.
"""

from reminders.services.compose import (
    FIRE_TASK,
    PartSpec,
    ReminderSpec,
    TargetSpec,
    media_create,
    media_purge_unused,
    reminder_create,
    reminder_delete,
    reminder_schedule_sync,
    reminder_update,
    reminder_validate,
)
from reminders.services.runs import (
    CANCELED,
    REMINDER_DELETED,
    ReminderStateError,
    reminder_fire,
    reminder_run_cancel,
    reminder_run_counts_refresh,
    reminder_run_enqueue,
    reminder_run_resume,
    reminder_run_retry_failed,
    reminder_runs_auto_resume,
    target_counts,
    targets_partly_sent,
)
from reminders.services.summaries import (
    reminder_run_notification_title,
    reminder_run_notify,
    summary_finished,
    summary_stopped,
    summary_waiting,
    summary_window_closed,
)

__all__ = [
    "CANCELED",
    "FIRE_TASK",
    "REMINDER_DELETED",
    "PartSpec",
    "ReminderSpec",
    "ReminderStateError",
    "TargetSpec",
    "media_create",
    "media_purge_unused",
    "reminder_create",
    "reminder_delete",
    "reminder_fire",
    "reminder_run_cancel",
    "reminder_run_counts_refresh",
    "reminder_run_enqueue",
    "reminder_run_notification_title",
    "reminder_run_notify",
    "reminder_run_resume",
    "reminder_run_retry_failed",
    "reminder_runs_auto_resume",
    "reminder_schedule_sync",
    "reminder_update",
    "reminder_validate",
    "summary_finished",
    "summary_stopped",
    "summary_waiting",
    "summary_window_closed",
    "target_counts",
    "targets_partly_sent",
]
