"""What an ingestion cycle writes: watermarks, topics, channel errors, a set's raw files and package."""

import re

from django.db import transaction

from accounts.models import TelegramAccount
from core.notifications import notifications_resolve
from ingestion.models import (
    AccountChannelMap,
    Channel,
    IngestionRun,
    TopicProgress,
)
from ingestion.services.skipped import skipped_package_resolve
from packages import grouping as package_grouping
from packages import services as package_services
from packages.models import Package, RawFile


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


def set_caption(items) -> str:
    """A set's caption: its first volume's text, else the first a later volume carries."""
    return next((item.text for item in items if item.text.strip()), "")


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
    # A post already in the catalog under another file was edited: its old package leaves it to this one.
    package_services.package_source_release(chat_id=channel.chat_id, message_ids=[item.id for item in items])
    package = package_services.package_stub_create(
        content_hash=content_hash,
        file_name=archive_set.file_name,
        file_size=sum(item.document.size for item in items),
        archive_type=archive_set.archive_type,
        is_multipart=archive_set.is_multipart,
        part_count=len(items),
        volume_names=[item.document.name for item in items],
        whole_by=archive_set.whole_by,
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
        caption=set_caption(items),
        volume_captions=[item.text for item in items],
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
