"""After crashes: stale runs, stubs whose upload vanished, stubs without a listing."""

import asyncio
import logging
import shutil
import threading
import time
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from accounts.models import AccountChat, AuthState
from accounts.services import account_gateway_call
from core.models import RunStatus
from core.runs import runs_reap
from ingestion.models import AccountChannelMap, Channel, IngestionRun, MapRole
from ingestion.notifications import notify_destination_messages_gone
from ingestion.services import channel_rewind, destination_get, ingestion_run_enqueue
from ingestion.staging import PARTIAL_FOLDER
from packages.models import MetadataStatus, Package
from packages.services import package_metadata_backfill, package_reupload_request
from telegram.errors import TelegramError
from telegram.records import ChatRef

logger = logging.getLogger(__name__)

# A stub younger than this may still be getting its listing from the worker that wrote it.
STUB_GRACE = timedelta(minutes=10)
# Copies fetched from the object store outside a run (a backfill's rar set) are this old only if left behind.
FETCHED_COPIES_GRACE = timedelta(hours=6)
CHECK_BATCH = 100


def ingestion_recover() -> dict:
    reaped = runs_reap(
        model=IngestionRun,
        max_requeues=settings.WORK_MAX_REQUEUES,
        enqueue=ingestion_run_enqueue,
    )
    backfilled = stubs_backfill()
    requeued = packages_check_destination()
    return {
        "requeued_runs": reaped.requeued,
        "failed_runs": reaped.failed,
        "backfilled": backfilled,
        "reuploads": requeued,
    }


def staging_sweep_keep(*, every_seconds: float) -> threading.Thread:
    """Sweep this host's staging now, then every `every_seconds`, on a thread of the worker process: staging is
    the host's own disk, so no task on a shared queue can sweep it (a host may take only `ingest` and `fanout`)."""

    def sweep_forever() -> None:
        while True:
            try:
                swept = staging_sweep()
                if swept:
                    logger.info("Swept %d leftovers from the staging folder %s", swept, settings.INGEST_STAGING_DIR)
            except Exception:
                logger.exception("Sweeping the staging folder %s failed", settings.INGEST_STAGING_DIR)
            finally:
                connection.close()  # this thread's own: not kept open for an hour
            time.sleep(every_seconds)

    thread = threading.Thread(target=sweep_forever, name="staging sweep", daemon=True)
    thread.start()
    return thread


def staging_sweep() -> int:
    """Remove the staging folders of runs that are not running here any more (a killed worker's), copies
    fetched from the object store that a killed backfill left (`packages.raw_objects.raw_files_local`), and
    unfinished downloads untouched for INGEST_PARTIAL_KEEP_HOURS."""
    root = Path(settings.INGEST_STAGING_DIR)
    if not root.is_dir():
        return 0
    left = time.time() - FETCHED_COPIES_GRACE.total_seconds()
    fetched = [folder for folder in root.glob("set-*") if folder.is_dir() and folder.stat().st_mtime < left]
    for folder in fetched:
        shutil.rmtree(folder, ignore_errors=True)
    folders = {}
    for folder in root.glob("run-*"):
        run_id = folder.name.removeprefix("run-")
        if folder.is_dir() and run_id.isdigit():
            folders[int(run_id)] = folder
    running = set(
        IngestionRun.objects.filter(pk__in=list(folders), status=RunStatus.RUNNING).values_list("pk", flat=True)
    )
    for run_id, folder in folders.items():
        if run_id not in running:
            shutil.rmtree(folder, ignore_errors=True)
    return len(folders) - len(running) + len(fetched) + _partials_sweep(root / PARTIAL_FOLDER)


def _partials_sweep(folder: Path) -> int:
    """Downloads left unfinished (kept so the next attempt resumes them) that nobody resumed in time."""
    if not folder.is_dir():
        return 0
    cutoff = time.time() - settings.INGEST_PARTIAL_KEEP_HOURS * 3600
    swept = 0
    for partial in folder.iterdir():
        try:
            if partial.stat().st_mtime < cutoff:
                partial.unlink()
                swept += 1
        except FileNotFoundError:
            continue
    return swept


def stubs_backfill(*, older_than: timedelta = STUB_GRACE) -> int:
    stubs = Package.objects.filter(metadata_status=MetadataStatus.PENDING, created_at__lt=timezone.now() - older_than)
    count = 0
    for package in stubs:
        package_metadata_backfill(package=package)
        count += 1
    return count


def packages_check_destination() -> int:
    """A package whose destination message is gone is ingested again from its source."""
    destination = destination_get()
    if destination is None:
        return 0
    writer = (
        AccountChannelMap.objects.filter(
            channel=destination, role=MapRole.WRITER, account__auth_state=AuthState.AUTHENTICATED
        )
        .select_related("account")
        .first()
    )
    if writer is None:
        return 0
    link = AccountChat.objects.filter(account=writer.account, chat=destination.chat).first()
    ref = ChatRef(
        id=destination.chat.telegram_id, access_hash=link.access_hash if link else 0, type=destination.chat.type
    )
    packages = list(
        Package.objects.filter(destination_chat=destination.chat_id, reupload_needed=False)
        .exclude(dest_message_ids=[])
        .order_by("dest_checked_at", "pk")[:CHECK_BATCH]
    )
    if not packages:
        return 0
    ids = sorted({message_id for package in packages for message_id in package.dest_message_ids})
    try:
        found = account_gateway_call(account=writer.account, action=lambda gateway: _get_in_batches(gateway, ref, ids))
    except TelegramError as exc:
        logger.warning("Could not check destination messages: %s", exc)
        return 0
    gone = [package for package in packages if any(found.get(mid) is None for mid in package.dest_message_ids)]
    now = timezone.now()
    Package.objects.filter(pk__in=[p.pk for p in packages]).exclude(pk__in=[p.pk for p in gone]).update(
        dest_checked_at=now
    )
    for package in gone:
        package_requeue_upload(package=package)
    if gone:
        notify_destination_messages_gone(packages=gone)
    return len(gone)


async def _get_in_batches(gateway, ref, ids):
    found = {}
    for start in range(0, len(ids), CHECK_BATCH):
        found.update(await gateway.get_messages(ref, ids[start : start + CHECK_BATCH]))
        await asyncio.sleep(0)
    return found


def package_requeue_upload(*, package: Package) -> None:
    """Mark the package for a new upload (it keeps its row, listing and history) and rewind its source
    below it: the next cycle downloads it again and uploads it with fresh random_ids."""
    logger.warning("Destination message of %s is gone; it will be uploaded again.", package.file_name)
    with transaction.atomic():
        source = Channel.objects.filter(chat=package.source_chat_id).values_list("pk", flat=True).first()
        if source is not None and package.source_message_id:
            channel_rewind(
                channel_id=source,
                below=package.source_message_id - 1,
                topic_id=package.source_topic_id,
            )
        package_reupload_request(package=package)
