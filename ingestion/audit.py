"""The catalog audit: the catalog against the destination both ways, and how far each source was scanned.

One read of every document in the destination answers both questions: a package whose destination message
is not among them has lost it (repair: upload it again), a document no package points at is not in the
catalog (repair: rebuild the catalog from the destination, which adds those carrying a catalog line).
Coverage per source channel, and per fetched topic of a forum: the range scanned (message 1 up to the
watermark), the gaps in it (messages skipped and not yet resolved) and the last scan.
"""

import logging

from django.urls import reverse
from django.utils import timezone

from core import locks
from core.errors import OperatorError
from core.notifications import notification_raise
from ingestion.models import AccountChannelMap, CatalogAudit, Channel, MapRole, SkippedPackage, TopicProgress
from ingestion.recovery import package_requeue_upload
from ingestion.services import destination_get
from packages.catalog import catalog_documents, catalog_part_read
from packages.models import Package
from telegram.errors import TelegramError

logger = logging.getLogger(__name__)

CATALOG_AUDIT_PROBLEMS = "catalog_audit_problems"
LISTED = 5  # names a notification lists before "and N more"


def catalog_audit_run() -> CatalogAudit | None:
    """Audit now; None when another audit is running."""
    with locks.advisory_lock(namespace=locks.CATALOG_AUDIT, name="destination") as acquired:
        if not acquired:
            return None
        audit = CatalogAudit.objects.create(coverage=coverage())
        try:
            _destination_check(audit)
        except (OperatorError, TelegramError) as exc:
            audit.error = str(exc)
        audit.finished_at = timezone.now()
        audit.save()
    logger.info(
        "Catalog audit #%s: %s missing, %s not in the catalog, %s",
        audit.pk,
        len(audit.missing),
        len(audit.orphans),
        audit.error or "read",
    )
    if audit.problems:
        catalog_audit_notify(audit=audit)
    return audit


def _destination_check(audit: CatalogAudit) -> None:
    destination = destination_get()
    if destination is None:
        raise OperatorError("No destination channel is set: pick one on the Channels page.")
    documents = catalog_documents(chat=destination.chat)
    present = {message.id for message in documents}
    packages = Package.objects.filter(destination_chat=destination.chat_id).exclude(dest_message_ids=[])
    pointed_at = set()
    audit.packages_checked = 0
    for package in packages.only("pk", "file_name", "dest_message_ids", "reupload_needed").iterator():
        audit.packages_checked += 1
        pointed_at.update(package.dest_message_ids)
        gone = [message_id for message_id in package.dest_message_ids if message_id not in present]
        if gone and not package.reupload_needed:
            audit.missing.append({"package": package.pk, "file_name": package.file_name, "message_ids": gone})
    audit.documents_checked = len(documents)
    for message in sorted(documents, key=lambda m: m.id):
        if message.id not in pointed_at:
            part = catalog_part_read(message)
            audit.orphans.append(
                {
                    "message_id": message.id,
                    "name": message.document.name,
                    "content_hash": part.content_hash if part else "",
                }
            )


def coverage() -> list[dict]:
    """Per source channel (and fetched forum topic): scanned range, gaps, last scan."""
    gaps: dict[tuple[int, int | None], list[dict]] = {}
    for skipped in SkippedPackage.objects.order_by("message_id"):
        if skipped.is_pending:
            continue  # waiting for volumes or another worker's copy: not a gap yet
        gap = {"message_id": skipped.message_id, "file_name": skipped.file_name, "reason": skipped.reason}
        gaps.setdefault((skipped.channel_id, skipped.topic_id), []).append(gap)
    rows = []
    channels = Channel.objects.filter(is_active=True, is_destination=False).select_related("chat")
    for channel in channels:
        maps = list(AccountChannelMap.objects.filter(channel=channel, role=MapRole.READER))
        scans = [m.last_scanned_at for m in maps if m.last_scanned_at]
        rows.append(
            {
                "channel": channel.pk,
                "title": channel.title,
                "topic_id": None,
                "topic_title": "",
                "scanned_through": max((m.last_processed_message_id for m in maps), default=0),
                "last_scan": max(scans).isoformat() if scans else None,
                "gaps": gaps.get((channel.pk, None), []),
            }
        )
        topics = TopicProgress.objects.filter(map__in=maps, fetch_enabled=True).order_by("topic_id", "-pk")
        seen = set()
        for topic in topics:
            if topic.topic_id in seen:
                continue
            seen.add(topic.topic_id)
            rows.append(
                {
                    "channel": channel.pk,
                    "title": channel.title,
                    "topic_id": topic.topic_id,
                    "topic_title": topic.title,
                    "scanned_through": topic.last_processed_message_id,
                    "last_scan": topic.last_scanned_at.isoformat() if topic.last_scanned_at else None,
                    "gaps": gaps.get((channel.pk, topic.topic_id), []),
                }
            )
    return rows


def catalog_audit_notify(*, audit: CatalogAudit) -> None:
    parts = []
    if audit.error:
        parts.append(f"The destination could not be read: {audit.error}")
    if audit.missing:
        names = ", ".join(item["file_name"] for item in audit.missing[:LISTED])
        more = f" and {len(audit.missing) - LISTED} more" if len(audit.missing) > LISTED else ""
        parts.append(f"{len(audit.missing)} packages lost destination messages: {names}{more}.")
    if audit.orphans:
        parts.append(f"{len(audit.orphans)} destination documents are in no package.")
    notification_raise(
        type=CATALOG_AUDIT_PROBLEMS,
        severity="error" if audit.error or audit.missing else "warning",
        title="The catalog audit found problems",
        message=" ".join(parts) + " Repair them on the Operations page.",
        subject="catalog-audit",
        url=reverse("operations") + "#catalog-audit",
        context={"audit": audit.pk, "missing": len(audit.missing), "orphans": len(audit.orphans)},
    )


def catalog_audit_repair_missing(*, audit: CatalogAudit) -> int:
    """Upload again the packages this audit found without their destination messages; how many."""
    if audit != CatalogAudit.objects.first():
        raise OperatorError("A newer audit exists: repair from the latest one.")
    packages = Package.objects.filter(pk__in=[item["package"] for item in audit.missing], reupload_needed=False)
    count = 0
    for package in packages:
        package_requeue_upload(package=package)
        count += 1
    return count
