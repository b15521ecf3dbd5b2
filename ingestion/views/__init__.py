"""The ingestion pages, one module per page family: channels (the list, a channel's page, its rules and topics),
a channel's archive passwords, joining and leaving (onboarding), runs, skipped packages, and the catalog audit's
buttons on the Operations page. The URLs wire these."""

from ingestion.views.catalog import catalog_audit_now, catalog_rebuild_now, catalog_repair_missing
from ingestion.views.channels import (
    channel_add_reader,
    channel_detail,
    channel_ingest_now,
    channel_list,
    channel_make_destination,
    channel_remove_reader,
    channel_rules,
    channel_set_active,
    channel_settings,
    channel_topic_fetch,
)
from ingestion.views.onboarding import (
    channel_join,
    channel_join_preview,
    channel_leave,
    channels_join_sources,
    destination_create,
)
from ingestion.views.passwords import channel_password_add, channel_password_remove
from ingestion.views.runs import run_detail, run_list, run_row, runs_ingest_now
from ingestion.views.skipped import skipped_list, skipped_retry, skipped_retry_all

__all__ = [
    "catalog_audit_now",
    "catalog_rebuild_now",
    "catalog_repair_missing",
    "channel_add_reader",
    "channel_detail",
    "channel_ingest_now",
    "channel_join",
    "channel_join_preview",
    "channel_leave",
    "channel_list",
    "channel_make_destination",
    "channel_password_add",
    "channel_password_remove",
    "channel_remove_reader",
    "channel_rules",
    "channel_set_active",
    "channel_settings",
    "channel_topic_fetch",
    "channels_join_sources",
    "destination_create",
    "run_detail",
    "run_list",
    "run_row",
    "runs_ingest_now",
    "skipped_list",
    "skipped_retry",
    "skipped_retry_all",
]
