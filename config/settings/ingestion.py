"""Ingestion: how often channels are read, how sets of volumes are taken, staging, previews and collections."""

from pathlib import Path

from config.env import envint, envstr, var_dir
from config.settings.environment import BASE_DIR

INGEST_INTERVAL_MINUTES = envint("INGEST_INTERVAL_MINUTES", 10, minimum=1)
INGEST_JITTER_SECONDS = envint("INGEST_JITTER_SECONDS", 30, minimum=0)
INGEST_MAX_SKIP_ATTEMPTS = envint("INGEST_MAX_SKIP_ATTEMPTS", 5, minimum=1)
INGEST_MAX_PACKAGE_BYTES = envint("INGEST_MAX_PACKAGE_BYTES", 20 * 1024**3, minimum=1)
INGEST_FLOOD_SLEEP_MAX_SECONDS = envint("INGEST_FLOOD_SLEEP_MAX_SECONDS", 60, minimum=0)
INGEST_TRANSIENT_RETRIES = envint("INGEST_TRANSIENT_RETRIES", 3, minimum=0)
# A channel's share of a cycle (sets uploaded), unless its page sets one: then the other channels have their
# turn, and a backfill goes on in a cycle queued INGEST_CONTINUE_SECONDS later.
INGEST_CHANNEL_SETS_PER_CYCLE = envint("INGEST_CHANNEL_SETS_PER_CYCLE", 20, minimum=1)
INGEST_CONTINUE_SECONDS = envint("INGEST_CONTINUE_SECONDS", 5, minimum=1)
# A run whose account another run holds stays queued; its task tries again this much later.
INGEST_ACCOUNT_BUSY_RETRY_SECONDS = envint("INGEST_ACCOUNT_BUSY_RETRY_SECONDS", 10, minimum=1)
# A volume set waits this long after its newest volume before it is taken (more may be on their way), and
# a set whose numbering may go on (its last volume as big as its first) waits up to INGEST_SET_OPEN_MAX_SECONDS.
INGEST_SET_SETTLE_SECONDS = envint("INGEST_SET_SETTLE_SECONDS", 120, minimum=0)
INGEST_SET_OPEN_MAX_SECONDS = envint("INGEST_SET_OPEN_MAX_SECONDS", 6 * 3600, minimum=0)
# Posts made this long ago or less are read again each cycle for edits that replaced their file (one request
# of a hundred documents a channel, only for a channel with packages from such posts); 0 turns it off.
INGEST_EDIT_WINDOW_SECONDS = envint("INGEST_EDIT_WINDOW_SECONDS", 2 * 24 * 3600, minimum=0)
# Free space kept on the staging disk beyond what a set needs (its download, and its split parts).
INGEST_DISK_MARGIN_BYTES = envint("INGEST_DISK_MARGIN_BYTES", 256 * 1024**2, minimum=0)
INGEST_PROGRESS_EVERY_SECONDS = 2
INGEST_SKIP_RECENT_SCAN_WINDOW_SECONDS = envint("INGEST_SKIP_RECENT_SCAN_WINDOW_SECONDS", 300, minimum=0)
INGEST_EMPTY_SCAN_BACKOFF_THRESHOLD = envint("INGEST_EMPTY_SCAN_BACKOFF_THRESHOLD", 5, minimum=1)
INGEST_EMPTY_SCAN_BACKOFF_EVERY_NTH = envint("INGEST_EMPTY_SCAN_BACKOFF_EVERY_NTH", 5, minimum=1)
# A channel's scan history (one line per channel and cycle) is kept this many days (purged daily).
INGEST_SCAN_HISTORY_DAYS = envint("INGEST_SCAN_HISTORY_DAYS", 14, minimum=1)
# An unfinished download is kept this long for the next attempt to resume (a killed worker's, a failed set's).
INGEST_PARTIAL_KEEP_HOURS = envint("INGEST_PARTIAL_KEEP_HOURS", 24, minimum=0)
# Every worker sweeps its own host's staging at start and this often (ingestion.recovery.staging_sweep_keep).
INGEST_STAGING_SWEEP_SECONDS = envint("INGEST_STAGING_SWEEP_SECONDS", 3600, minimum=1)
INGEST_STAGING_DIR = Path(envstr("INGEST_STAGING_DIR", str(var_dir(BASE_DIR) / "staging")))
# Every package's destination messages exist, every destination document is a package (ingestion/audit.py).
CATALOG_AUDIT_HOURS = envint("CATALOG_AUDIT_HOURS", 6, minimum=1)

# Previews: a photo posted this close to an archive (same topic, caption naming it) shows it; else the first
# of this many images inside the archive, each made a thumbnail in the listing child (the others: the picker).
PACKAGE_PREVIEW_PHOTO_WINDOW_SECONDS = envint("PACKAGE_PREVIEW_PHOTO_WINDOW_SECONDS", 600, minimum=0)
PACKAGE_PREVIEW_ARCHIVE_IMAGES = envint("PACKAGE_PREVIEW_ARCHIVE_IMAGES", 8, minimum=0)
# Collections: packages of one topic with the same base name or creator, posted this close together.
PACKAGE_COLLECTION_WINDOW_SECONDS = envint("PACKAGE_COLLECTION_WINDOW_SECONDS", 24 * 3600, minimum=0)
