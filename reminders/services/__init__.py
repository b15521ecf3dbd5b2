"""Reminders' services, one module a job, all importable from here (`from reminders.services import X`):

- compose: the specs, media, reminders and their beat schedule;
- runs: firing a run and the operator's actions on it;
- summaries: what a stopped run says, and the notification it raises;
- pausing: the operator's Pause, an account's rest and stop switch pausing its runs, moving pending groups;
- slots: each schedule slot served by one run, the catch-up each minute, missed slots;
- moved_groups: a basic group upgraded to a supergroup, followed by its reminders;
- audiences: saved lists of an account's groups (by filters or a CSV), checked when a run is made.
"""

from reminders.services.audiences import (
    NO_LONGER_IN_AUDIENCE,
    NOT_A_MEMBER,
    AudienceError,
    AudienceFilter,
    AudienceMemberSpec,
    audience_delete,
    audience_filter_of,
    audience_import,
    audience_matches,
    audience_members_checked,
    audience_save,
)
from reminders.services.compose import (
    PartSpec,
    ReminderSpec,
    TargetSpec,
    media_create,
    media_purge_unused,
    part_format_problem,
    part_formatted,
    reminder_create,
    reminder_delete,
    reminder_schedule_sync,
    reminder_update,
    reminder_validate,
)
from reminders.services.moved_groups import GROUP_MIGRATED, chat_migration_follow
from reminders.services.pausing import (
    reminder_run_move,
    reminder_run_pause,
    runs_after_rest,
    runs_after_sending_changed,
    runs_pause_for_rest,
)
from reminders.services.runs import (
    CANCELED,
    REMINDER_DELETED,
    ReminderRunActive,
    ReminderStateError,
    reminder_fire,
    reminder_run_cancel,
    reminder_run_counts_refresh,
    reminder_run_enqueue,
    reminder_run_resume,
    reminder_run_retry_failed,
    reminder_runs_auto_resume,
    reminder_slot_fire,
    target_counts,
    targets_partly_sent,
)
from reminders.services.slots import (
    reminder_fire_scheduled,
    reminder_slot_serve,
    reminder_slots_catch_up,
)
from reminders.services.summaries import (
    SLOT_MISSED,
    reminder_run_notification_title,
    reminder_run_notify,
    summary_account_resting,
    summary_finished,
    summary_outage,
    summary_stopped,
    summary_too_many_failed,
    summary_waiting,
    summary_window_closed,
)

__all__ = [
    "NO_LONGER_IN_AUDIENCE",
    "NOT_A_MEMBER",
    "AudienceError",
    "AudienceFilter",
    "AudienceMemberSpec",
    "audience_delete",
    "audience_filter_of",
    "audience_import",
    "audience_matches",
    "audience_members_checked",
    "audience_save",
    "GROUP_MIGRATED",
    "chat_migration_follow",
    "reminder_run_move",
    "reminder_run_pause",
    "runs_after_rest",
    "runs_after_sending_changed",
    "runs_pause_for_rest",
    "summary_account_resting",
    "summary_too_many_failed",
    "CANCELED",
    "REMINDER_DELETED",
    "PartSpec",
    "part_format_problem",
    "part_formatted",
    "ReminderSpec",
    "ReminderRunActive",
    "ReminderStateError",
    "SLOT_MISSED",
    "TargetSpec",
    "media_create",
    "media_purge_unused",
    "reminder_create",
    "reminder_delete",
    "reminder_fire",
    "reminder_fire_scheduled",
    "reminder_slot_fire",
    "reminder_slot_serve",
    "reminder_slots_catch_up",
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
    "summary_outage",
    "summary_stopped",
    "summary_waiting",
    "summary_window_closed",
    "target_counts",
    "targets_partly_sent",
]
