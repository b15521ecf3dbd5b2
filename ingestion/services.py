"""Channels, their readers and writers, runs, skipped packages and Retry.

Why this size: every write of channels, maps, runs and skipped packages, each small; split by job if it grows.
"""

import random
import re
from datetime import timedelta

from celery import signature
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F, Min
from django.utils import timezone

from accounts.models import AccountChat, AuthState, Chat, TelegramAccount
from core import task_names
from core.errors import OperatorError
from core.models import RunStatus
from core.notifications import notifications_resolve
from core.runs import run_task_send
from ingestion.models import (
    PENDING_REASONS,
    AccountChannelMap,
    Channel,
    IngestionRun,
    IngestionTrigger,
    MapRole,
    SkippedPackage,
    SkipReason,
    TopicProgress,
)
from ingestion.scanning import scan_state_reset
from packages import catalog
from packages import grouping as package_grouping
from packages import services as package_services
from packages.models import RAW_FILE_MAX_RETENTION_DAYS, Package, RawFile


def channel_for_chat(*, chat: Chat) -> Channel:
    channel, _ = Channel.objects.get_or_create(chat=chat)
    return channel


def channel_update(
    *,
    channel: Channel,
    is_active: bool | None = None,
    category: str | None = None,
    expiration_days: int | None | type(...) = ...,
) -> Channel:
    if expiration_days is not ... and expiration_days is not None and expiration_days < 0:
        raise ValidationError(
            {"expiration_days": "Use empty (keep raw files), 0 (keep 3 hours) or a positive number of days."}
        )
    if expiration_days is not ... and expiration_days is not None and expiration_days > RAW_FILE_MAX_RETENTION_DAYS:
        raise ValidationError(
            {
                "expiration_days": f"Keep raw files at most {RAW_FILE_MAX_RETENTION_DAYS} days; "
                "leave it empty to keep them for good."
            }
        )
    if channel.is_destination and is_active:
        raise ValidationError({"is_active": "The destination channel cannot also be a source."})
    if is_active is not None:
        channel.is_active = is_active
    old_category = channel.category
    if category is not None:
        channel.category = category.strip()
    if expiration_days is not ...:
        channel.expiration_days = expiration_days
    with transaction.atomic():
        channel.save()
        # The category is the tag of the channel's packages: a new one is re-applied to those already in.
        package_services.packages_category_retag(chat_id=channel.chat_id, old=old_category, new=channel.category)
    return channel


def channel_link_account(
    *, channel: Channel, account: TelegramAccount, role: str = MapRole.READER
) -> AccountChannelMap:
    """Let an account read (or write) a channel it is a member of."""
    if not AccountChat.objects.filter(account=account, chat=channel.chat).exists():
        raise ValidationError(
            {"account": f"{account} is not in {channel.title}; refresh its chats or join the channel first."}
        )
    channel_map, created = AccountChannelMap.objects.get_or_create(
        account=account, channel=channel, defaults={"role": role}
    )
    if not created and channel_map.role != role:
        channel_map.role = role
        channel_map.save(update_fields=["role"])
    return channel_map


def channel_unlink_account(*, channel: Channel, account: TelegramAccount) -> None:
    AccountChannelMap.objects.filter(channel=channel, account=account).delete()


def destination_set(*, channel: Channel, writers: list[TelegramAccount] | None = None) -> Channel:
    """Make this channel the one destination; its writers are the accounts that can post there."""
    with transaction.atomic():
        Channel.objects.filter(is_destination=True).exclude(pk=channel.pk).update(is_destination=False)
        channel.is_destination = True
        channel.is_active = False
        channel.save(update_fields=["is_destination", "is_active"])
        chosen = (
            writers
            if writers is not None
            else [link.account for link in AccountChat.objects.filter(chat=channel.chat, can_post=True)]
        )
        for account in chosen:
            link = AccountChat.objects.filter(account=account, chat=channel.chat).first()
            if link is None or not link.can_post:
                raise ValidationError({"writers": f"{account} cannot post in {channel.title}."})
            channel_link_account(channel=channel, account=account, role=MapRole.WRITER)
    return channel


def destination_get() -> Channel | None:
    return Channel.objects.select_related("chat").filter(is_destination=True).first()


def topic_set_fetch(*, topic: TopicProgress, fetch_enabled: bool) -> TopicProgress:
    topic.fetch_enabled = fetch_enabled
    topic.save(update_fields=["fetch_enabled"])
    if fetch_enabled:
        # Its watermark may lag the channel's: the next cycle scans from there.
        scan_state_reset(channel_id=topic.map.channel_id, below=topic.last_processed_message_id)
    return topic


def ingestion_run_request(
    *,
    account: TelegramAccount,
    trigger: str = IngestionTrigger.MANUAL,
    enqueue: bool = True,
    countdown: int | None = None,
    channel: Channel | None = None,
) -> tuple[IngestionRun, bool]:
    """Queue a run for an account unless one is already queued or running; (run, created).

    enqueue=False leaves the run for the caller to claim and work in-process; countdown delays its start;
    channel makes it a run of that one channel (Ingest now on the channel's page).
    """
    if account.auth_state != AuthState.AUTHENTICATED or not account.is_active:
        raise ValidationError(f"{account} is not an active, logged-in account.")
    if account.is_resting:
        raise ValidationError(
            f"{account} is resting until {account.resting_until:%Y-%m-%d %H:%M} UTC; nothing is "
            "ingested through it until then."
        )
    with transaction.atomic():
        TelegramAccount.objects.select_for_update().get(pk=account.pk)
        open_run = IngestionRun.objects.filter(
            account=account, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]
        ).first()
        if open_run is not None:
            if trigger == IngestionTrigger.MANUAL and enqueue and open_run.starts_at is not None:
                _start_now(open_run)
            return open_run, False
        if enqueue and countdown is None:
            scheduled = trigger == IngestionTrigger.SCHEDULE
            countdown = random.randint(0, settings.INGEST_JITTER_SECONDS) if scheduled else 0
        starts_at = timezone.now() + timedelta(seconds=countdown) if enqueue and countdown else None
        run = IngestionRun.objects.create(account=account, trigger=trigger, channel=channel, starts_at=starts_at)
        if enqueue:
            transaction.on_commit(lambda: _enqueue(run.pk, countdown))
    return run, True


def _start_now(run: IngestionRun) -> None:
    """Ingest now on an account whose run waits for its delayed start: that run starts at once. Its delayed task
    still arrives later and finds the run claimed (a second delivery), so the run is worked once."""
    if IngestionRun.objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(starts_at=None):
        run.starts_at = None
        transaction.on_commit(lambda: _enqueue(run.pk))


def _enqueue(run_id: int, countdown: int = 0) -> None:
    run_task_send(task_names.INGESTION_RUN_EXECUTE, run_id, countdown=countdown)


def ingestion_run_enqueue(run_id: int) -> None:
    _enqueue(run_id)


def ingestion_cycle_start(*, trigger: str = IngestionTrigger.SCHEDULE) -> list[IngestionRun]:
    """One run per active, logged-in account that reads at least one active channel and is not resting."""
    accounts = (
        TelegramAccount.objects.filter(
            is_active=True,
            auth_state=AuthState.AUTHENTICATED,
            channel_maps__role=MapRole.READER,
            channel_maps__channel__is_active=True,
        )
        .exclude(resting_until__gt=timezone.now())
        .distinct()
    )
    runs = []
    for account in accounts:
        run, created = ingestion_run_request(account=account, trigger=trigger)
        if created:
            runs.append(run)
    return runs


def channel_ingest_now(*, channel: Channel) -> tuple[IngestionRun, bool]:
    """Ingest one channel now, with the first logged-in account that reads it; (run, created).

    An account that already has a run queued or running keeps it (one run per account at a time): that run is
    returned, and it reads this channel too unless it was asked for another one channel.
    """
    if not channel.is_active:
        raise ValidationError(f"{channel.title} is switched off; switch it on to ingest it.")
    reader = (
        TelegramAccount.objects.filter(
            channel_maps__channel=channel,
            channel_maps__role=MapRole.READER,
            is_active=True,
            auth_state=AuthState.AUTHENTICATED,
        )
        .order_by("phone")
        .first()
    )
    if reader is None:
        raise ValidationError(f"No logged-in account reads {channel.title}; add a reader on the Channels page.")
    return ingestion_run_request(account=reader, trigger=IngestionTrigger.MANUAL, channel=channel)


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


def channels_apply_roles(*, roles: dict[int, str]) -> None:
    """Set up sources and the destination as an operator would.

    A `source` is activated and read by every account in it; the `destination`
    is written by every account that can post there.
    """
    channels_for_known_chats()
    for telegram_id, role in roles.items():
        chat = Chat.objects.filter(telegram_id=telegram_id).first()
        if chat is None:
            continue
        channel = channel_for_chat(chat=chat)
        if role == "source":
            channel_update(channel=channel, is_active=True)
            for link in AccountChat.objects.filter(chat=chat).select_related("account"):
                channel_link_account(channel=channel, account=link.account, role=MapRole.READER)
        elif role == "destination":
            destination_set(channel=channel)


def channels_for_known_chats() -> None:
    """A Channel row for every channel or supergroup an account is in, so the operator can set each up.

    Run when an account's chats are stored (accounts.signals.chats_refreshed) and when roles are applied;
    pages and the API only read."""
    from ingestion.selectors import SOURCE_CHAT_TYPES

    chats = Chat.objects.filter(
        type__in=SOURCE_CHAT_TYPES, account_links__isnull=False, channel__isnull=True
    ).distinct()
    Channel.objects.bulk_create([Channel(chat=chat) for chat in chats], ignore_conflicts=True)


# -- what an ingestion cycle writes ----------------------------------------------------------------------------------


def channel_error_clear(*, channel: Channel) -> None:
    """Reachable again: the Channels page and the alerts stop showing the old error."""
    if channel.last_error:
        channel.last_error = ""
        channel.save(update_fields=["last_error"])
    notifications_resolve(subject=channel.notification_subject)


def channel_error_record(*, channel: Channel, account: TelegramAccount, error: str) -> None:
    channel.last_error = f"{account}: {error}"
    channel.save(update_fields=["last_error"])


def topics_sync(*, channel_map: AccountChannelMap, topics) -> list[TopicProgress]:
    """Learn new topics of a forum (and new titles, which their packages show too); returns all of the map's
    topics."""
    known = dict(TopicProgress.objects.filter(map=channel_map).values_list("topic_id", "title"))
    for topic in topics:
        title = topic.title[:255]
        TopicProgress.objects.update_or_create(map=channel_map, topic_id=topic.id, defaults={"title": title})
        if known.get(topic.id, title) != title:
            Package.objects.filter(source_chat=channel_map.channel.chat_id, source_topic_id=topic.id).update(
                source_topic_title=title
            )
    return list(TopicProgress.objects.filter(map=channel_map))


def watermark_advance(*, holder: AccountChannelMap | TopicProgress, message_id: int) -> None:
    """Move a channel map's or a topic's watermark forward, never back."""
    if message_id <= holder.last_processed_message_id:
        return
    type(holder).objects.filter(pk=holder.pk, last_processed_message_id__lt=message_id).update(
        last_processed_message_id=message_id
    )
    holder.last_processed_message_id = message_id


def archive_set_raw_files_record(*, channel: Channel, volumes) -> list[RawFile]:
    """Keep each downloaded volume ((message, staged path, sha256)) as a raw file, with the channel's retention."""
    return [
        package_services.raw_file_record(
            file_uid=str(item.document.id),
            file_name=item.document.name,
            size=item.document.size,
            sha256=volume_hash,
            staged_path=path,
            chat=channel.chat,
            expiration_days=channel.expiration_days,
        )
        for item, path, volume_hash in volumes
    ]


def archive_set_record_duplicate(*, package: Package, channel: Channel, items) -> None:
    """The set is content already ingested: its document ids dedupe for free next time."""
    package_services.package_remember_documents(package=package, document_ids=[item.document.id for item in items])
    skipped_package_resolve(channel=channel, message_id=items[0].id)


def creator_for(*, topic_title: str | None, file_name: str, channel_title: str) -> str:
    """Topic title, else a creator named in the file name ("[Name] …" or "Name - …"), else the channel."""
    if topic_title and topic_title.lower() != "general":
        return topic_title
    match = re.match(r"^\[(?P<name>[^\]]+)\]", file_name) or re.match(r"^(?P<name>[^-]{2,60}?)\s+-\s+", file_name)
    if match:
        return match.group("name").strip()
    return channel_title


def catalog_task_send(task_name: str) -> None:
    """Queue task_names.CATALOG_AUDIT or CATALOG_REBUILD after commit: a button's work."""
    transaction.on_commit(lambda: signature(task_name).apply_async())


def catalog_rebuild_from_destination(*, on_progress=None) -> catalog.CatalogRebuild:
    """Rebuild or repair the catalog from the destination channel; the packages it adds get the creator and
    tags a cycle would have given them (topic title, file name, channel category), and their listings."""
    destination = destination_get()
    if destination is None:
        raise OperatorError("No destination channel is set: pick one on the Channels page first.")
    result = catalog.catalog_rebuild(chat=destination.chat, on_progress=on_progress)
    for package in Package.objects.filter(pk__in=result.created_ids).select_related("source_chat__channel"):
        channel = getattr(package.source_chat, "channel", None) if package.source_chat else None
        topic = (
            TopicProgress.objects.filter(map__channel=channel, topic_id=package.source_topic_id).first()
            if channel and package.source_topic_id
            else None
        )
        package.source_topic_title = topic.title if topic else package.source_topic_title
        package.creator = creator_for(
            topic_title=package.source_topic_title or None,
            file_name=package.file_name,
            channel_title=channel.title if channel else "",
        )
        package.tags = [channel.category] if channel and channel.category else []
        package.save(update_fields=["source_topic_title", "creator", "tags"])
    catalog.catalog_rebuild_notify(chat=destination.chat, result=result)
    return result


@transaction.atomic
def archive_set_record_upload(
    *,
    channel: Channel,
    topic: TopicProgress | None,
    archive_set,
    content_hash: str,
    raws: list[RawFile],
    destination_chat_id: int,
    dest_message_ids: list[int],
    dest_part_names: list[str],
    run: IngestionRun,
    uploaded_by: TelegramAccount,
) -> Package:
    """Phase one, right after the upload: the package stub (enough never to upload again)."""
    items = archive_set.items
    package = package_services.package_stub_create(
        content_hash=content_hash,
        file_name=archive_set.file_name,
        file_size=sum(item.document.size for item in items),
        archive_type=archive_set.archive_type,
        is_multipart=archive_set.is_multipart,
        part_count=len(items),
        volume_names=[item.document.name for item in items],
        source_chat_id=channel.chat_id,
        source_message_id=items[0].id,
        source_message_ids=[item.id for item in items],
        source_topic_id=topic.topic_id if topic else None,
        source_topic_title=topic.title if topic else "",
        telegram_document_ids=[item.document.id for item in items],
        destination_chat_id=destination_chat_id,
        dest_message_ids=dest_message_ids,
        dest_part_names=dest_part_names,
        creator=creator_for(
            topic_title=topic.title if topic else None, file_name=archive_set.file_name, channel_title=channel.title
        ),
        tags=[channel.category] if channel.category else [],
        uploaded_by=uploaded_by,
        source_posted_at=items[0].date,
        source_grouped_id=items[0].grouped_id,
        source_reply_to_id=items[0].reply_to_id,
    )
    package_grouping.package_group(package=package)
    package.raw_files.set(raws)
    run.packages.add(package)
    skipped_package_resolve(channel=channel, message_id=items[0].id)
    return package


@transaction.atomic
def archive_set_record_reupload(
    *, package: Package, channel: Channel, items, dest_message_ids: list[int], dest_part_names: list[str], uploaded_by
) -> Package:
    """The new upload of a package whose destination messages were deleted."""
    package_services.package_reuploaded(
        package=package, dest_message_ids=dest_message_ids, dest_part_names=dest_part_names, uploaded_by=uploaded_by
    )
    skipped_package_resolve(channel=channel, message_id=items[0].id)
    return package
