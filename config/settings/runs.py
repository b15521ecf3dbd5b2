"""Claiming work: how a live run shows it is alive, and when a dead one is reaped or its task sent again."""

from django.core.exceptions import ImproperlyConfigured

from config.env import envint

WORK_STALE_AFTER_SECONDS = envint("WORK_STALE_AFTER_SECONDS", 300, minimum=5)
# Beats on a thread of its own (core.engine); a third of the threshold leaves a live run two beats of slack.
WORK_HEARTBEAT_SECONDS = envint("WORK_HEARTBEAT_SECONDS", max(1, WORK_STALE_AFTER_SECONDS // 3), minimum=1)
if WORK_HEARTBEAT_SECONDS * 2 > WORK_STALE_AFTER_SECONDS:
    raise ImproperlyConfigured(
        f"WORK_HEARTBEAT_SECONDS={WORK_HEARTBEAT_SECONDS} is not well below WORK_STALE_AFTER_SECONDS="
        f"{WORK_STALE_AFTER_SECONDS}: live runs would be reaped as dead. Use at most half of it (a third is the "
        "default)."
    )
WORK_MAX_REQUEUES = envint("WORK_MAX_REQUEUES", 3, minimum=0)
# How long a send waits out Redis not answering (a restart) before its run pauses, saying why.
REDIS_PATIENCE_SECONDS = envint("REDIS_PATIENCE_SECONDS", 60, minimum=1)
# How often beat sends the reaper (runs_reap_all); the chaos bench, whose runs go stale in seconds, asks for more.
RUNS_REAP_EVERY_SECONDS = envint("RUNS_REAP_EVERY_SECONDS", 60, minimum=1)
# A run still queued after this long gets its task sent again (the broker may have lost it).
WORK_RESEND_QUEUED_AFTER_SECONDS = envint("WORK_RESEND_QUEUED_AFTER_SECONDS", 1800, minimum=60)
