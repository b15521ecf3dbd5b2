"""Ingestion's services, one module a job, all importable from here (`from ingestion import services`):

- channels: channels, their readers and writers, the destination, which chats are channels;
- runs: ingestion runs asked for by the schedule or an operator, queued and started spread out;
- skipped: skipped packages, their reasons, and Retry;
- cycle_records: what a cycle writes (watermarks, topics, channel errors, a set's raw files and package);
- catalog_tasks: the catalog buttons' work (audit, rebuild from the destination);
- onboarding: joining and leaving channels, creating the destination, a new account joining the sources;
- rules: what each channel takes (kinds, names, sizes, start point), and trying them on the channel.
"""

from ingestion.services.catalog_tasks import (
    catalog_rebuild_from_destination,
    catalog_task_send,
)
from ingestion.services.channels import (
    channel_for_chat,
    channel_link_account,
    channel_unlink_account,
    channel_update,
    channels_apply_roles,
    channels_for_known_chats,
    destination_get,
    destination_set,
    topic_set_fetch,
)
from ingestion.services.cycle_records import (
    archive_set_raw_files_record,
    archive_set_record_duplicate,
    archive_set_record_reupload,
    archive_set_record_upload,
    channel_error_clear,
    channel_error_record,
    creator_for,
    topics_sync,
    watermark_advance,
)
from ingestion.services.onboarding import (
    STATUS_WORDS,
    account_join_sources,
    channel_join,
    channel_leave,
    chat_preview,
    destination_create,
)
from ingestion.services.rules import (
    HistoryCount,
    RulesPreview,
    channel_history_count,
    channel_rules_check,
    channel_rules_preview,
    channel_rules_try,
    channel_rules_update,
)
from ingestion.services.runs import (
    channel_ingest_now,
    ingestion_cycle_start,
    ingestion_run_enqueue,
    ingestion_run_request,
    run_progress_write,
)
from ingestion.services.skipped import (
    channel_rewind,
    skipped_package_record,
    skipped_package_resolve,
    skipped_package_retry,
    skipped_packages_retry_all,
)

__all__ = [
    "STATUS_WORDS",
    "account_join_sources",
    "archive_set_raw_files_record",
    "archive_set_record_duplicate",
    "archive_set_record_reupload",
    "archive_set_record_upload",
    "catalog_rebuild_from_destination",
    "catalog_task_send",
    "HistoryCount",
    "RulesPreview",
    "channel_history_count",
    "channel_rules_check",
    "channel_rules_preview",
    "channel_rules_try",
    "channel_rules_update",
    "channel_error_clear",
    "channel_error_record",
    "channel_for_chat",
    "channel_ingest_now",
    "channel_join",
    "channel_leave",
    "channel_link_account",
    "channel_rewind",
    "channel_unlink_account",
    "channel_update",
    "channels_apply_roles",
    "channels_for_known_chats",
    "chat_preview",
    "creator_for",
    "destination_create",
    "destination_get",
    "destination_set",
    "ingestion_cycle_start",
    "ingestion_run_enqueue",
    "ingestion_run_request",
    "run_progress_write",
    "skipped_package_record",
    "skipped_package_resolve",
    "skipped_package_retry",
    "skipped_packages_retry_all",
    "topic_set_fetch",
    "topics_sync",
    "watermark_advance",
]
