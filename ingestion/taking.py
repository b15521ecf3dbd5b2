"""Taking one archive set: already in the catalog?, whole yet?, then fetch, upload, record and index.

Given the cycle's context and its fetch, upload and preview stages; one set's trouble becomes its own
`SetFailed` (a skipped package with its reason), never the end of the account's cycle, and an outage (the
database or the object store away) is charged to no set.
"""

import errno
import logging
import shutil
import time
from pathlib import Path

from django.conf import settings

from core import locks
from core.db_thread import in_db_thread
from core.engine import OUTAGES, WorkInterrupted
from core.formatting import format_duration
from core.sizes import size_text
from core.storage import storage_describe, storage_outage
from ingestion import notifications
from ingestion import services as ingestion_services
from ingestion.cycle import AccountRefused, CycleContext, CycleInterrupted, Outcome, OutcomeKind, ScanTarget, SetFailed
from ingestion.fetching import FetchStage, content_hash_of
from ingestion.models import PENDING_REASONS, SkipReason
from ingestion.previewing import PreviewStage
from ingestion.selectors import Writer
from ingestion.uploading import UploadStage
from packages import selectors as package_selectors
from packages import services as package_services
from packages.detection import ArchiveSet, set_may_grow
from packages.models import MetadataStatus, Package
from packages.raw_objects import RawObjectUnreadable
from telegram.errors import AccountRestricted, AuthRequired
from telegram.gateway import TelegramGateway
from telegram.records import ChatRef, DocumentMessage

logger = logging.getLogger(__name__)


def replaced_since(package: Package, items: list[DocumentMessage]) -> bool:
    """Whether the set's posts were edited after its package was made and now hold files it does not know."""
    edited = any(package_selectors.edited_after(item.edit_date, package) for item in items)
    return edited and not set(package.telegram_document_ids) >= {item.document.id for item in items}


class SetStage:
    """One archive set at a time, for one cycle given its context and the stages it drives."""

    def __init__(self, context: CycleContext, *, fetch: FetchStage, upload: UploadStage, preview: PreviewStage):
        self.context = context
        self.fetch = fetch
        self.upload = upload
        self.preview = preview
        # The set after the one being taken, which may download while this one uploads (set by the scan).
        self.up_next: tuple[TelegramGateway, ScanTarget, ArchiveSet] | None = None

    async def _duplicate(self, package: Package, channel, items: list[DocumentMessage]) -> None:
        self.context.progress.add(duplicates=1)
        await in_db_thread(ingestion_services.archive_set_record_duplicate)(
            package=package, channel=channel, items=items
        )

    async def process(
        self, reader: TelegramGateway, target: ScanTarget, archive_set: ArchiveSet, writer: Writer | None
    ) -> Outcome:
        items: list[DocumentMessage] = archive_set.items
        channel = target.channel_map.channel
        size = sum(item.document.size for item in items)
        await self.context.report(current_file=archive_set.file_name, current_bytes_done=0, current_bytes_total=size)
        document_ids = [item.document.id for item in items]
        known = await in_db_thread(package_services.package_find)(
            document_ids=document_ids, source=(channel.chat_id, items[0].id)
        )
        if known is not None and replaced_since(known, items):
            known = None  # the post was edited to hold another file: new content, whatever its package was
        if known is not None and not known.reupload_needed:
            self.context.progress.add(duplicates=1)
            await in_db_thread(ingestion_services.skipped_package_resolve)(channel=channel, message_id=items[0].id)
            return Outcome(kind=OutcomeKind.DUPLICATE, package=known)
        try:
            return await self._attempt(reader, target, archive_set, writer, size)
        except SetFailed as failure:
            record = await in_db_thread(ingestion_services.skipped_package_record)(
                channel=channel,
                message_ids=[item.id for item in items],
                topic_id=target.topic_id,
                account=self.context.account,
                file_name=archive_set.file_name,
                file_size=size,
                part_count=len(items),
                reason=failure.reason,
                error_message=str(failure),
            )
            if failure.reason in PENDING_REASONS:
                logger.info("%s in %s: %s", archive_set.file_name, target.label, failure)
                return Outcome(kind=OutcomeKind.PENDING, holds_watermark=True)
            if failure.reason == SkipReason.DISK_FULL:
                await in_db_thread(notifications.notify_disk_full)(file_name=archive_set.file_name, error=str(failure))
            self.context.progress.add(skipped=1)
            logger.warning("Skipped %s in %s: %s", archive_set.file_name, target.label, failure)
            holds = record.is_retryable and record.attempt_count < settings.INGEST_MAX_SKIP_ATTEMPTS
            return Outcome(kind=OutcomeKind.SKIPPED, holds_watermark=holds)

    async def _attempt(
        self, reader: TelegramGateway, target: ScanTarget, archive_set: ArchiveSet, writer: Writer | None, size: int
    ) -> Outcome:
        """Take the set, or raise SetFailed with why not; any other surprise becomes the set's SetFailed too,
        so one set's trouble never ends the account's cycle."""
        try:
            waiting = await self.waiting(reader, target.ref, archive_set)
            if waiting:
                raise SetFailed(SkipReason.WAITING_FOR_VOLUMES, waiting)
            if archive_set.missing:
                raise SetFailed(SkipReason.MISSING_PART, f"{archive_set.file_name}: {archive_set.missing}.")
            if size > settings.INGEST_MAX_PACKAGE_BYTES:
                raise SetFailed(
                    SkipReason.SIZE_LIMIT,
                    f"{size_text(size)} is above {size_text(settings.INGEST_MAX_PACKAGE_BYTES)}, "
                    "the largest package the console takes.",
                )
            if writer is None:
                await in_db_thread(notifications.notify_destination_unreachable)()
                raise SetFailed(
                    SkipReason.NO_DESTINATION,
                    "No destination channel with a logged-in writer account; choose one on the Channels page.",
                )
            return await self._ingest(reader, target, archive_set, writer)
        except (
            SetFailed,
            CycleInterrupted,
            AccountRefused,
            AuthRequired,
            AccountRestricted,
            WorkInterrupted,
            *OUTAGES,
        ):
            raise  # an outage (the database away) is not the set's fault
        except OSError as exc:
            if exc.errno == errno.ENOSPC:
                raise SetFailed(SkipReason.DISK_FULL, f"The staging disk is full ({exc}).") from exc
            raise SetFailed(SkipReason.ERROR, f"{exc.__class__.__name__}: {exc}") from exc
        except Exception as exc:
            if storage_outage(exc):
                # Not the archive's fault: no attempt is charged to the set, the watermark stays below it.
                raise CycleInterrupted(
                    f"Interrupted by an outage: {storage_describe()} did not answer ({exc.__class__.__name__}) "
                    f"while keeping {archive_set.file_name}; it is taken again next cycle."
                ) from exc
            logger.exception("Unexpected error while ingesting %s in %s", archive_set.file_name, target.label)
            raise SetFailed(SkipReason.ERROR, f"{exc.__class__.__name__}: {exc}") from exc

    async def waiting(self, reader: TelegramGateway, ref: ChatRef, archive_set: ArchiveSet) -> str:
        """Why a volume set is not taken yet (more volumes may be on their way), or "" to take it now. What its
        volumes say of themselves decides (packages.completeness); time only when their bytes cannot tell."""
        if archive_set.volumes[0].scheme in ("single", "model") and not archive_set.missing:
            return ""
        items = archive_set.items
        newest = max(items, key=lambda item: item.date)
        age = time.time() - newest.date.timestamp()
        verdict = None if archive_set.missing else await self.fetch.set_verdict_of(reader, ref, archive_set)
        if verdict is not None and verdict.whole:
            logger.info("%s is whole (%s)", archive_set.file_name, verdict.rule)
            archive_set.whole_by = verdict.rule
            return ""
        settle, open_max = settings.INGEST_SET_SETTLE_SECONDS, settings.INGEST_SET_OPEN_MAX_SECONDS
        if verdict is not None and verdict.whole is False:
            if age >= open_max:
                archive_set.missing = f"{verdict.rule}, and none has come for {open_max / 60:.0f} min"
                return ""
            until = newest.date.timestamp() + open_max
            rule = f"{verdict.rule}. It is taken as soon as they are all posted"
        elif age < settle or (
            set_may_grow(archive_set, sizes=[item.document.size for item in items]) and age < open_max
        ):
            until = newest.date.timestamp() + (settle if age < settle else open_max)
            rule = f"the set is taken once no volume has arrived for {(until - newest.date.timestamp()) / 60:.0f} min"
            if verdict is not None:
                rule = f"{verdict.rule}, so {rule}"
        else:
            quiet = f"no new volume for {format_duration(age)}"
            archive_set.whole_by = f"time ({verdict.rule}): {quiet}" if verdict is not None else f"time: {quiet}"
            return ""
        earliest = self.context.waiting_until
        self.context.waiting_until = until if earliest is None else min(earliest, until)
        return (
            f"Waiting for more volumes of {archive_set.file_name}: {newest.document.name} was posted "
            f"{format_duration(age)} ago; {rule}."
        )

    def _set_folder(self, ref: ChatRef, archive_set: ArchiveSet) -> Path:
        return self.context.staging / f"{ref.id}-{archive_set.items[0].id}"

    async def prefetch_next(self, writer: Writer) -> None:
        """Once a set is on disk, the next set downloads while this one uploads: only one that would be taken
        (whole, settled, not ingested before), with parts in flight (1 = one thing at a time, as before), and
        never while another process waits for a session this cycle holds (it gets it at the next boundary)."""
        up_next, self.up_next = self.up_next, None
        if up_next is None or settings.TRANSFER_PARTS_IN_FLIGHT == 1:
            return
        reader, target, archive_set = up_next
        size = sum(item.document.size for item in archive_set.items)
        if size > settings.INGEST_MAX_PACKAGE_BYTES or await self.waiting(reader, target.ref, archive_set):
            return
        if archive_set.missing:
            return
        if await self.context.wanted_elsewhere():
            return
        known = await in_db_thread(package_services.package_find)(
            document_ids=[item.document.id for item in archive_set.items],
            source=(target.channel_map.channel.chat_id, archive_set.items[0].id),
        )
        if known is None:
            folder = self._set_folder(target.ref, archive_set)
            self.fetch.prefetch_start(reader, target.ref, archive_set, folder, writer)

    async def _ingest(
        self, reader: TelegramGateway, target: ScanTarget, archive_set: ArchiveSet, writer: Writer
    ) -> Outcome:
        channel = target.channel_map.channel
        folder = self._set_folder(target.ref, archive_set)
        volumes = await self.fetch.prefetched(archive_set)  # (item, staged path, volume sha256)
        if volumes is None:
            volumes = await self.fetch.fetch_set(reader, target.ref, archive_set, folder, writer)
        await self.prefetch_next(writer)
        content_hash = content_hash_of([volume_hash for _, _, volume_hash in volumes])
        existing = await in_db_thread(package_services.package_find)(content_hash=content_hash)
        if existing is not None and not existing.reupload_needed:
            await self._duplicate(existing, channel, archive_set.items)
            return Outcome(kind=OutcomeKind.DUPLICATE, package=existing)
        try:
            raws = await in_db_thread(ingestion_services.archive_set_raw_files_record)(channel=channel, volumes=volumes)
        except package_services.RetentionMisconfigured as exc:
            raise SetFailed(SkipReason.CONFIGURATION, f"{channel.title}: {exc}") from exc
        except RawObjectUnreadable as exc:
            raise SetFailed(SkipReason.DOWNLOAD_FAILED, f"{archive_set.file_name}: {exc}") from exc

        names = [item.document.name for item in archive_set.items]
        staged = [path for _, path, _ in volumes]
        async with self.fetch.raw_files_local(raws, names, staged, folder) as paths:
            # Listed once, before the upload: a copy of a listing the operator skips is not uploaded.
            passwords = await in_db_thread(package_services.archive_password_candidates)(
                captions=[item.text for item in archive_set.items], chat_id=channel.chat_id
            )
            listing = await in_db_thread(package_services.package_listing_read)(
                archive_type=archive_set.archive_type, volume_paths=paths, passwords=passwords
            )
            original = await in_db_thread(package_services.package_skipped_copy_of)(listing=listing)
            if original is not None:
                await self._duplicate(original, channel, archive_set.items)
                return Outcome(kind=OutcomeKind.DUPLICATE, package=original)
            async with locks.async_advisory_lock(namespace=locks.CONTENT_HASH, name=content_hash) as acquired:
                if not acquired:
                    # Kept as pending, so the set is checked again until the other copy is in the destination.
                    raise SetFailed(
                        SkipReason.IN_FLIGHT,
                        f"Another worker is uploading the same content ({content_hash[:12]}…) right now; "
                        "checked again next cycle.",
                    )
                existing = await in_db_thread(package_services.package_find)(content_hash=content_hash)
                if existing is not None and not existing.reupload_needed:
                    await self._duplicate(existing, channel, archive_set.items)
                    return Outcome(kind=OutcomeKind.DUPLICATE, package=existing)
                hashes = [volume_hash for _, _, volume_hash in volumes]
                generation, live = 0, {}
                if existing is not None:
                    generation, live = existing.upload_generation + 1, await self.upload.live_parts(existing, writer)
                dest_ids, part_names = await self.upload.upload(
                    writer, archive_set.items, paths, hashes, folder, content_hash, generation, live
                )
                if existing is not None:
                    package = await in_db_thread(ingestion_services.archive_set_record_reupload)(
                        package=existing,
                        channel=channel,
                        items=archive_set.items,
                        dest_message_ids=dest_ids,
                        dest_part_names=part_names,
                        uploaded_by=writer.account,
                    )
                else:
                    package = await in_db_thread(ingestion_services.archive_set_record_upload)(
                        channel=channel,
                        topic=target.topic,
                        archive_set=archive_set,
                        content_hash=content_hash,
                        raws=raws,
                        destination_chat_id=writer.destination_chat_id,
                        dest_message_ids=dest_ids,
                        dest_part_names=part_names,
                        run=self.context.run,
                        uploaded_by=writer.account,
                    )
            if package.metadata_status == MetadataStatus.PENDING:
                await self.context.report(current_step="indexing")
                await in_db_thread(package_services.package_metadata_fill)(
                    package=package, volume_paths=paths, listing=listing
                )
                await self.preview.photo_preview(reader, target, archive_set.items, package)
        shutil.rmtree(folder, ignore_errors=True)
        await in_db_thread(notifications.notifications_resolve_uploads)()
        self.context.progress.add(ingested=1)
        return Outcome(kind=OutcomeKind.INGESTED, package=package)
