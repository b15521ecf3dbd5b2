"""Reminders (DESIGN.md "Reminders"): every account's send pace, shared by all workers through Redis."""

from django.core.exceptions import ImproperlyConfigured

from config.env import envint

REMINDER_MAX_SEND_PER_MINUTE = envint("REMINDER_MAX_SEND_PER_MINUTE", 40, minimum=1)
REMINDER_SEND_BURST = envint("REMINDER_SEND_BURST", 3, minimum=1)
REMINDER_GROUP_CONCURRENCY = envint("REMINDER_GROUP_CONCURRENCY", 3, minimum=1)
# Pause between the parts of one group, so a group's messages do not look machine-fired.
REMINDER_PART_JITTER_MIN_MS = envint("REMINDER_PART_JITTER_MIN_MS", 200, minimum=0)
REMINDER_PART_JITTER_MAX_MS = envint("REMINDER_PART_JITTER_MAX_MS", 500, minimum=0)
if REMINDER_PART_JITTER_MAX_MS < REMINDER_PART_JITTER_MIN_MS:
    raise ImproperlyConfigured("REMINDER_PART_JITTER_MAX_MS must be at least REMINDER_PART_JITTER_MIN_MS.")
REMINDER_TRANSIENT_RETRIES = envint("REMINDER_TRANSIENT_RETRIES", 3, minimum=0)
# A run whose account is busy with another run waits this long before it tries again.
REMINDER_ACCOUNT_BUSY_RETRY_SECONDS = envint("REMINDER_ACCOUNT_BUSY_RETRY_SECONDS", 10, minimum=1)
REMINDER_PROGRESS_EVERY_SECONDS = 2
# The pace adapts under REMINDER_MAX_SEND_PER_MINUTE (docs/operations.md "How the send pace adapts"): each
# FloodWait, SLOWMODE_WAIT or PEER_FLOOD multiplies it by LOWER_PERCENT (never under FLOOR); every RAISE_EVERY
# clean sends add RAISE_PERCENT of the ceiling, up to RECOVER_PERCENT of the pace that drew the last FloodWait.
REMINDER_PACE_LOWER_PERCENT = envint("REMINDER_PACE_LOWER_PERCENT", 70, minimum=1)
REMINDER_PACE_RECOVER_PERCENT = envint("REMINDER_PACE_RECOVER_PERCENT", 90, minimum=1)
if REMINDER_PACE_LOWER_PERCENT >= 100 or REMINDER_PACE_RECOVER_PERCENT > 100:
    raise ImproperlyConfigured(
        "REMINDER_PACE_LOWER_PERCENT must be under 100, and REMINDER_PACE_RECOVER_PERCENT at most 100."
    )
REMINDER_PACE_FLOOR_PER_MINUTE = envint("REMINDER_PACE_FLOOR_PER_MINUTE", 2, minimum=1)
REMINDER_PACE_RAISE_EVERY = envint("REMINDER_PACE_RAISE_EVERY", 50, minimum=0)  # 0: a lowered pace stays low
REMINDER_PACE_RAISE_PERCENT = envint("REMINDER_PACE_RAISE_PERCENT", 5, minimum=1)
# A pace nobody used for this long is forgotten: the next run starts at the ceiling.
REMINDER_PACE_MEMORY_HOURS = envint("REMINDER_PACE_MEMORY_HOURS", 24, minimum=1)
# Quarantine before a ban: PEER_FLOOD, or this many FloodWaits within the window, rest the account this long.
ACCOUNT_REST_FLOOD_WAITS = envint("ACCOUNT_REST_FLOOD_WAITS", 5, minimum=1)
ACCOUNT_REST_WINDOW_MINUTES = envint("ACCOUNT_REST_WINDOW_MINUTES", 60, minimum=1)
ACCOUNT_REST_HOURS = envint("ACCOUNT_REST_HOURS", 12, minimum=1)
# A run pauses itself when more than this share of its last REMINDER_ERROR_RECENT_GROUPS groups failed (0: never).
REMINDER_ERROR_SHARE_PERCENT = envint("REMINDER_ERROR_SHARE_PERCENT", 20, minimum=0)
REMINDER_ERROR_RECENT_GROUPS = envint("REMINDER_ERROR_RECENT_GROUPS", 50, minimum=1)
REMINDER_OBSERVED_RATE_RUNS = 5
# Uploaded media that no reminder uses (an abandoned compose wizard) is deleted this long after upload.
MEDIA_UNUSED_KEEP_HOURS = envint("MEDIA_UNUSED_KEEP_HOURS", 24, minimum=1)
# Schedule slots (docs/operations.md "Beat"): each minute a catch-up serves the latest slot nothing fired while its
# window is open, and records older ones (and closed windows) as missed runs; it looks this far back.
REMINDER_SLOT_LOOKBACK_HOURS = envint("REMINDER_SLOT_LOOKBACK_HOURS", 24, minimum=1)
# A fire task meeting a PostgreSQL or Redis outage retries this many times, backing off up to a minute apart.
REMINDER_FIRE_RETRIES = envint("REMINDER_FIRE_RETRIES", 10, minimum=0)
REMINDER_FIRE_RETRY_MAX_SECONDS = 60
