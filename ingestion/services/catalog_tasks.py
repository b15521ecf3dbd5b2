"""The catalog buttons' work: the audit and the rebuild from the destination channel."""

from celery import signature
from django.db import transaction

from core.errors import OperatorError
from ingestion.fetching import content_hash_of
from ingestion.models import (
    TopicProgress,
)
from ingestion.services.channels import destination_get
from ingestion.services.cycle_records import creator_for
from packages import catalog
from packages.models import Package, RawFile
from packages.services import package_previews_remake


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
        if package.preview_id is None and _kept_raws_linked(package):
            package_previews_remake(package=package)
    catalog.catalog_rebuild_notify(chat=destination.chat, result=result)
    return result


def _kept_raws_linked(package: Package) -> bool:
    """Link a rebuilt package to its raw files when they are still kept (the rows outlive a deleted package):
    the same names, and their digests make its content hash. Whether they were."""
    names = package.volume_names or [package.file_name]
    kept = RawFile.objects.filter(file_name__in=names, purged_at__isnull=True).exclude(object="").order_by("-pk")
    by_name = {}
    for raw in kept:
        by_name.setdefault(raw.file_name, raw)  # the newest download of each name
    ordered = [by_name.get(name) for name in names]
    if any(raw is None for raw in ordered) or content_hash_of([raw.hash for raw in ordered]) != package.content_hash:
        return False
    package.raw_files.add(*ordered)
    return True
