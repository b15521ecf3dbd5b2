"""Packages' services, one module a job, all importable from here (`from packages.services import X`):

- raw_files: the downloaded volumes kept for a while, one object per content, their purge;
- splitting: volumes above the upload limit split into parts, proven to re-join;
- identity: which package an archive set already is, its first row, a new upload of a lost one;
- search: the words a package is found by;
- listings: a package's file listing, read, stored, or why it could not be;
- passwords: archive passwords kept per channel (sealed), and those a listing tries;
- repack_decisions: "likely the same as" an earlier package, and the operator's answer;
- editing: creator and tags, one package or many, and a channel's category tag;
- sends: what a send to Telegram records (queued with its parts, each part's outcome, a restart).
"""

from packages.services.editing import (
    BULK_EDIT_LIMIT,
    MAX_CREATOR_CHARS,
    MAX_TAG_CHARS,
    MAX_TAGS,
    creator_clean,
    package_edit,
    packages_bulk_edit,
    packages_category_retag,
    tags_clean,
)
from packages.services.identity import (
    package_find,
    package_remember_documents,
    package_reupload_request,
    package_reuploaded,
    package_source_release,
    package_stub_create,
)
from packages.services.listings import (
    PackageListing,
    package_listing_read,
    package_metadata_backfill,
    package_metadata_fill,
    package_previews_remake,
    package_skipped_copy_of,
)
from packages.services.passwords import (
    MAX_CHANNEL_PASSWORDS,
    MAX_PASSWORD_CHARS,
    archive_password_candidates,
    archive_passwords_reseal,
    channel_password_add,
    channel_password_remove,
)
from packages.services.raw_files import (
    SHORT_RETENTION,
    RetentionMisconfigured,
    raw_file_expiry,
    raw_file_lost,
    raw_file_record,
    raw_files_purge,
)
from packages.services.repack_decisions import (
    RepackDecisionRefused,
    package_repack_decide,
    package_repack_recognise,
)
from packages.services.search import (
    SEARCH_TEXT_LIMIT,
    package_search_words_update,
)
from packages.services.sends import (
    package_send_counts_record,
    package_send_part_failed,
    package_send_part_sent,
    package_send_queue,
    package_send_restart,
)
from packages.services.splitting import (
    SplitMismatch,
    UploadPart,
    part_write,
    upload_plan,
    volume_split,
)

__all__ = [
    "BULK_EDIT_LIMIT",
    "MAX_CHANNEL_PASSWORDS",
    "MAX_PASSWORD_CHARS",
    "MAX_CREATOR_CHARS",
    "MAX_TAGS",
    "MAX_TAG_CHARS",
    "PackageListing",
    "RepackDecisionRefused",
    "RetentionMisconfigured",
    "SEARCH_TEXT_LIMIT",
    "SHORT_RETENTION",
    "SplitMismatch",
    "UploadPart",
    "archive_password_candidates",
    "archive_passwords_reseal",
    "channel_password_add",
    "channel_password_remove",
    "creator_clean",
    "package_edit",
    "package_find",
    "package_listing_read",
    "package_metadata_backfill",
    "package_metadata_fill",
    "package_previews_remake",
    "package_remember_documents",
    "package_repack_decide",
    "package_repack_recognise",
    "package_reupload_request",
    "package_reuploaded",
    "package_source_release",
    "package_search_words_update",
    "package_send_counts_record",
    "package_send_part_failed",
    "package_send_part_sent",
    "package_send_queue",
    "package_send_restart",
    "package_skipped_copy_of",
    "package_stub_create",
    "packages_bulk_edit",
    "packages_category_retag",
    "part_write",
    "raw_file_expiry",
    "raw_file_lost",
    "raw_file_record",
    "raw_files_purge",
    "tags_clean",
    "upload_plan",
    "volume_split",
]
