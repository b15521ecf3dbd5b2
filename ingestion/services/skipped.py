"""Skipped packages: recorded with their reason, resolved, and tried again (Retry)."""

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F, Min
from django.utils import timezone

from accounts.models import TelegramAccount
from ingestion.models import (
    PENDING_REASONS,
    AccountChannelMap,
    Channel,
    IngestionRun,
    MapRole,
    SkippedPackage,
    SkipReason,
    TopicProgress,
)
from ingestion.scanning import scan_state_reset
from ingestion.services.runs import channel_ingest_now


def skipped_package_record(
    *,
    channel: Channel,
    message_ids: list[int],
    topic_id: int | None,
    account: TelegramAccount,
    file_name: str,
    file_size: int,
    part_count: int,
    reason: str,
    error_message: str,
) -> SkippedPackage:
    """Keep a failure visible; a repeat failure counts one more attempt (a pending set counts none)."""
    first = min(message_ids)
    attempt = 0 if reason in PENDING_REASONS else 1
    values = {
        "message_ids": sorted(message_ids),
        "topic_id": topic_id,
        "account": account,
        "file_name": file_name,
        "file_size": file_size,
        "is_multipart": part_count > 1,
        "part_count": part_count,
        "reason": reason,
        "error_message": error_message[:5000],
        "updated_at": timezone.now(),
    }
    try:
        with transaction.atomic():
            return SkippedPackage.objects.create(channel=channel, message_id=first, attempt_count=attempt, **values)
    except IntegrityError:
        SkippedPackage.objects.filter(channel=channel, message_id=first).update(
            attempt_count=F("attempt_count") + attempt, **values
        )
        return SkippedPackage.objects.get(channel=channel, message_id=first)


def skipped_package_resolve(*, channel: Channel, message_id: int) -> None:
    """The set went through after all: its skipped row goes."""
    SkippedPackage.objects.filter(channel=channel, message_id=message_id).delete()


def channel_rewind(*, channel_id: int, below: int, topic_id: int | None = None) -> None:
    """Move the channel's reading watermarks back to `below` (one topic's, or every topic's), so the
    next cycle scans from there whatever its idle rules say."""
    maps = AccountChannelMap.objects.filter(channel_id=channel_id, role=MapRole.READER)
    maps.filter(last_processed_message_id__gt=below).update(last_processed_message_id=below)
    topics = TopicProgress.objects.filter(map__in=maps, last_processed_message_id__gt=below)
    if topic_id is not None:
        topics = topics.filter(topic_id=topic_id)
    topics.update(last_processed_message_id=below)
    scan_state_reset(channel_id=channel_id, below=below)


def skipped_package_retry(*, skipped: SkippedPackage) -> IngestionRun | None:
    """Delete the row and rewind the watermarks to just below it, then ingest its channel now.

    Returns the run that tries it, or None when no account can read the channel now (the next cycle that
    can will try it).
    """
    with transaction.atomic():
        channel_rewind(channel_id=skipped.channel_id, below=skipped.message_id - 1, topic_id=skipped.topic_id)
        skipped.delete()
    try:
        run, _ = channel_ingest_now(channel=skipped.channel)
    except ValidationError:
        return None
    return run


def skipped_packages_retry_all(*, reason: str = "") -> int:
    """Retry every skipped package (of one reason): one rewind per channel and topic, not per row."""
    if reason and reason not in SkipReason.values:
        raise ValidationError({"reason": f"Unknown reason {reason!r}; use one of {', '.join(SkipReason.values)}."})
    rows = SkippedPackage.objects.all()
    if reason:
        rows = rows.filter(reason=reason)
    with transaction.atomic():
        lowest = rows.values("channel_id", "topic_id").annotate(first=Min("message_id"))
        for group in lowest:
            channel_rewind(channel_id=group["channel_id"], below=group["first"] - 1, topic_id=group["topic_id"])
        count, _ = rows.delete()
    return count
