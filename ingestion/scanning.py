"""What to scan this cycle, without touching history when nothing changed.

Per channel, in this order: retryable skipped packages pending → scan; never
scanned → scan; scanned within INGEST_SKIP_RECENT_SCAN_WINDOW_SECONDS and idle
→ skip; an empty streak of INGEST_EMPTY_SCAN_BACKOFF_THRESHOLD or more and a
cycle number that is not a multiple of INGEST_EMPTY_SCAN_BACKOFF_EVERY_NTH →
skip; otherwise the batched last-message check decides. A forum is decided as
one channel (it is scanned channel-wide); its topics carry their own state for
the operator to see.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import F

from core import clock
from ingestion.models import (
    RETRYABLE_REASONS,
    AccountChannelMap,
    ChannelScan,
    EmptyScans,
    IngestionRun,
    ScanAction,
    SkippedPackage,
    TopicProgress,
)

SCAN, CHECK, SKIP, FAILED = ScanAction.SCAN, ScanAction.CHECK, ScanAction.SKIP, ScanAction.FAILED


@dataclass(frozen=True)
class Decision:
    action: str  # scan, check or skip
    reason: str


def cycle_number(*, run: IngestionRun) -> int:
    """This account's cycles so far, this one included: survives restarts."""
    return IngestionRun.objects.filter(account_id=run.account_id, pk__lte=run.pk).count()


def backoff_skips(*, state: EmptyScans, cycle: int) -> bool:
    """Whether a backed-off map or topic (state.in_backoff) sits this cycle out: it is looked at every Nth."""
    return state.in_backoff and cycle % settings.INGEST_EMPTY_SCAN_BACKOFF_EVERY_NTH != 0


def scan_decide(*, channel_map: AccountChannelMap, cycle: int, pending_retry: bool, at: datetime) -> Decision:
    if pending_retry:
        return Decision(SCAN, "retryable skipped packages pending")
    if channel_map.last_scanned_at is None:
        return Decision(SCAN, "never scanned")
    recent = at - channel_map.last_scanned_at < timedelta(seconds=settings.INGEST_SKIP_RECENT_SCAN_WINDOW_SECONDS)
    if recent and channel_map.consecutive_empty_scans > 0:
        return Decision(SKIP, "scanned recently and idle")
    if backoff_skips(state=channel_map, cycle=cycle):
        return Decision(SKIP, f"idle for {channel_map.consecutive_empty_scans} scans: backing off")
    return Decision(CHECK, "last-message check")


def scan_plan(*, maps: list[AccountChannelMap], cycle: int, asked: bool = False) -> dict[int, Decision]:
    """asked: an operator asked for these channels (Ingest now on a channel's page): no idle rule sits them out."""
    if asked:
        return {m.pk: Decision(CHECK, "Ingest now") for m in maps}
    at = clock.now()
    pending = set(
        SkippedPackage.objects.filter(
            channel_id__in=[m.channel_id for m in maps],
            reason__in=RETRYABLE_REASONS,
            attempt_count__lt=settings.INGEST_MAX_SKIP_ATTEMPTS,
        ).values_list("channel_id", flat=True)
    )
    return {m.pk: scan_decide(channel_map=m, cycle=cycle, pending_retry=m.channel_id in pending, at=at) for m in maps}


def scan_record_idle(*, channel_map: AccountChannelMap) -> None:
    """The last-message check found nothing new: an empty scan that read no history."""
    at = clock.now()
    AccountChannelMap.objects.filter(pk=channel_map.pk).update(
        last_scanned_at=at, last_scan_found_archives=0, consecutive_empty_scans=F("consecutive_empty_scans") + 1
    )
    TopicProgress.objects.filter(map=channel_map, fetch_enabled=True).update(
        last_scanned_at=at, last_scan_found_archives=0, consecutive_empty_scans=F("consecutive_empty_scans") + 1
    )


def scan_record(
    *, holder, found_archives: int, failures: int, scanned_through: int | None = None, retry_left: bool = False
) -> None:
    """After a scan: truly idle (nothing found, nothing failed, no retry left) grows the streak, else resets it."""
    idle = found_archives == 0 and failures == 0 and not retry_left
    fields = {
        "last_scanned_at": clock.now(),
        "last_scan_found_archives": found_archives,
        "consecutive_empty_scans": F("consecutive_empty_scans") + 1 if idle else 0,
    }
    if scanned_through is not None:
        fields["scanned_through_message_id"] = scanned_through
    type(holder).objects.filter(pk=holder.pk).update(**fields)


def scan_state_reset(*, channel_id: int, below: int) -> None:
    """After a Retry: the next cycle scans this channel again from below the retried message."""
    AccountChannelMap.objects.filter(channel_id=channel_id, scanned_through_message_id__gt=below).update(
        scanned_through_message_id=below
    )
    AccountChannelMap.objects.filter(channel_id=channel_id).update(consecutive_empty_scans=0, last_scanned_at=None)
    TopicProgress.objects.filter(map__channel_id=channel_id).update(consecutive_empty_scans=0)


def channel_scans_purge(*, older_than: timedelta) -> int:
    """Scan history older than `older_than` goes; the runs themselves stay."""
    deleted, _ = ChannelScan.objects.filter(scanned_at__lt=clock.now() - older_than).delete()
    return deleted


def channel_scan_write(
    *, run: IngestionRun, channel_map: AccountChannelMap, action: str, reason: str, **counts
) -> ChannelScan:
    """One line of the channel's scan history (and of the run's page): what this cycle did with it, and why."""
    read = action in (SCAN, FAILED) and channel_map.channel.chat.is_forum
    topics = TopicProgress.objects.filter(map=channel_map, fetch_enabled=True).count() if read else 0
    return ChannelScan.objects.create(
        run=run,
        channel=channel_map.channel,
        scanned_at=clock.now(),
        action=action,
        reason=reason[:300],
        topics=topics,
        **counts,
    )
