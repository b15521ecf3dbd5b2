"""The fetch stage: find the documents above a watermark, then download each volume once.

Each volume is re-fetched right before its download (fresh file reference), streamed to a staging file and
hashed in the same pass (the payload is read once); trouble resumes the download from its offset. The gateway
keeps several parts in flight and hands them over in order. A download in progress lives under
`INGEST_STAGING_DIR/partial/` until it is whole, so a worker killed mid-file leaves its whole parts for the
next attempt of the same account, which hashes them from disk and goes on at the first missing part. A volume
whose raw file is kept (downloaded before, by this machine or another) is read back from the storage instead.
"""

import asyncio
import hashlib
import logging
import os
import shutil
from contextlib import aclosing, asynccontextmanager
from datetime import datetime
from pathlib import Path

from django.conf import settings

from core.db_thread import in_db_thread
from ingestion.cycle import CycleContext, SetFailed, sleep_flood_wait
from ingestion.models import SkipReason
from ingestion.selectors import Writer
from ingestion.staging import PARTIAL_FOLDER, StagingFile, partial_resume_point, read_blocks
from packages import raw_objects
from packages import selectors as package_selectors
from packages import services as package_services
from packages.completeness import SetVerdict, set_verdict
from packages.detection import ArchiveSet
from telegram.errors import FileReferenceExpired, FloodWait, NotFound, TargetForbidden, TransientError
from telegram.gateway import TelegramGateway
from telegram.records import PART_SIZE, ChatRef, DocumentMessage
from telegram.retry import TransientRetries

logger = logging.getLogger(__name__)


async def documents_above(
    gateway: TelegramGateway, ref: ChatRef, *, min_id: int, min_date: datetime | None = None, call=None
) -> list[DocumentMessage]:
    """Every document message above min_id (and since min_date), ascending (channel-wide in a forum), page
    after page until the gateway says nothing older is left; `call` wraps each request (the cycle's retry
    policy)."""
    call = call or (lambda make_call: make_call())
    found: dict[int, DocumentMessage] = {}
    offset_id: int | None = 0
    while offset_id is not None:
        page = await call(
            lambda offset_id=offset_id: gateway.search_documents(
                ref, min_id=min_id, offset_id=offset_id, min_date=min_date
            )
        )
        for message in page.messages:
            if message.document is not None:
                found[message.id] = message
        offset_id = page.next_offset_id
    return [found[message_id] for message_id in sorted(found)]


def content_hash_of(volume_hashes: list[str]) -> str:
    """A single file's SHA-256; for a volume set, the SHA-256 of its volumes' digests in order.

    Every payload byte is hashed once, however many volumes there are.
    """
    if len(volume_hashes) == 1:
        return volume_hashes[0]
    return hashlib.sha256("\n".join(volume_hashes).encode()).hexdigest()


class FetchStage:
    """Finds documents and downloads volumes for one cycle, given its context; keeps what it learns for the
    cycle: what each set's bytes said, the sets downloading in the background, the whole downloads."""

    def __init__(self, context: CycleContext):
        self.context = context
        self.set_verdicts: dict[tuple[int, ...], SetVerdict] = {}  # what a set's bytes said, by its documents
        self.prefetching: dict[int, asyncio.Task] = {}  # first message id of a set → the task downloading it
        self.whole_downloads: dict[Path, Path] = {}  # staged volume → where its download is kept past the run

    async def history(
        self, reader: TelegramGateway, ref: ChatRef, *, min_id: int, min_date: datetime | None = None
    ) -> list[DocumentMessage]:
        return await documents_above(reader, ref, min_id=min_id, min_date=min_date, call=self.context.call)

    async def set_verdict_of(self, reader: TelegramGateway, ref: ChatRef, archive_set: ArchiveSet) -> SetVerdict:
        """What the set's volumes say about its being whole, from a few bytes read where they lie; asked once a
        cycle per set (a set already whole asks nothing: its documents do not change)."""
        items = archive_set.items
        key = tuple(item.document.id for item in items)
        if key in self.set_verdicts:
            return self.set_verdicts[key]

        async def read(index: int, offset: int, length: int) -> bytes:
            document = items[index].document
            return await self.context.call(lambda: reader.read_range(ref, document, offset=offset, length=length))

        kept = [
            await in_db_thread(package_selectors.raw_file_kept)(file_uid=str(item.document.id), size=item.document.size)
            for item in items
        ]
        if all(kept):
            # Taken whole by an earlier attempt (an upload that failed): nothing to ask Telegram again.
            self.set_verdicts[key] = SetVerdict(True, "every volume is kept from an earlier attempt")
            return self.set_verdicts[key]
        try:
            verdict = await set_verdict(
                archive_set=archive_set, sizes=[item.document.size for item in items], read=read
            )
        except (FileReferenceExpired, NotFound, TargetForbidden, TransientError) as exc:
            verdict = SetVerdict(None, f"the volumes could not be read to tell whether the set is whole ({exc})")
        self.set_verdicts[key] = verdict
        return verdict

    def _check_free_space(self, folder: Path, archive_set: ArchiveSet, writer: Writer) -> None:
        """The set's download, its split parts (a volume above the writer's limit is split on the same disk)
        and a margin must fit, or the set waits as DISK_FULL instead of failing half-way."""
        sizes = [item.document.size for item in archive_set.items]
        needed = sum(sizes) + sum(size for size in sizes if size > writer.account.upload_limit_bytes)
        needed += settings.INGEST_DISK_MARGIN_BYTES
        free = shutil.disk_usage(folder).free
        if free < needed:
            raise SetFailed(
                SkipReason.DISK_FULL,
                f"{archive_set.file_name} needs {needed / 1024**3:.2f} GB free on the staging disk; "
                f"{free / 1024**3:.2f} GB are.",
            )

    async def fetch_set(
        self, reader: TelegramGateway, ref: ChatRef, archive_set: ArchiveSet, folder: Path, writer: Writer, **options
    ) -> list[tuple[DocumentMessage, Path, str]]:
        """Every volume of the set: (item, staged path or None when its raw file is kept, volume sha256), in order."""
        folder.mkdir(parents=True, exist_ok=True)
        self._check_free_space(folder, archive_set, writer)
        volumes = []
        for item in archive_set.items:
            path, volume_hash = await self._volume(reader, ref, item, folder, **options)
            volumes.append((item, path, volume_hash))
        return volumes

    def prefetch_start(self, reader: TelegramGateway, ref: ChatRef, archive_set: ArchiveSet, folder, writer) -> None:
        """Download a set in the background (while the set before it uploads); `_prefetched` hands it over."""
        task = asyncio.ensure_future(self.fetch_set(reader, ref, archive_set, folder, writer, foreground=False))
        self.prefetching[archive_set.items[0].id] = task

    async def prefetched(self, archive_set: ArchiveSet) -> list[tuple[DocumentMessage, Path, str]] | None:
        """The volumes of a set downloaded in the background (waiting for the rest), or None if it was not."""
        task = self.prefetching.pop(archive_set.items[0].id, None)
        if task is None:
            return None
        if not task.done():
            await self.context.report(current_step="downloading")
        return await task

    async def prefetch_drop(self, *, keep: int | None = None) -> None:
        """Stop background downloads of sets other than `keep` (what they got so far stays for a resume)."""
        dropped = [task for first_id, task in self.prefetching.items() if first_id != keep]
        self.prefetching = {first_id: task for first_id, task in self.prefetching.items() if first_id == keep}
        for task in dropped:
            task.cancel()
        await asyncio.gather(*dropped, return_exceptions=True)

    async def _volume(
        self, reader: TelegramGateway, ref: ChatRef, item: DocumentMessage, folder: Path, **options
    ) -> tuple[Path | None, str]:
        """(the staged download, its SHA-256), or (None, the recorded SHA-256) when the volume's raw file is
        kept: a retry, or another machine's set, does not download it from Telegram again."""
        kept = await in_db_thread(package_selectors.raw_file_kept)(
            file_uid=str(item.document.id), size=item.document.size
        )
        if kept is not None:
            return None, kept.hash
        return await self.download(reader, ref, item, folder, **options)

    @asynccontextmanager
    async def raw_files_local(self, raws, names: list[str], staged: list[Path | None], folder: Path):
        """The set's volumes as local files for the upload: this worker's staged copies, or the kept copies read
        back from the storage (in a thread: the cycle keeps its heartbeat meanwhile)."""
        if any(path is None for path in staged):
            await self.context.report(current_step="reading the kept copy")
        files = raw_objects.raw_files_local(raws, names, staged=staged, under=folder)
        try:
            paths = await asyncio.to_thread(files.__enter__)
        except raw_objects.RawObjectUnreadable as exc:
            if exc.raw is not None:
                await in_db_thread(package_services.raw_file_lost)(raw=exc.raw)
            raise SetFailed(SkipReason.DOWNLOAD_FAILED, f"{exc}; it is downloaded from Telegram again.") from exc
        try:
            yield paths
        finally:
            await asyncio.to_thread(files.__exit__, None, None, None)

    async def download(
        self, reader: TelegramGateway, ref: ChatRef, item: DocumentMessage, folder: Path, *, foreground: bool = True
    ) -> tuple[Path, str]:
        """Stream one volume to disk, hashing in the same pass; resume from the offset on trouble, and from the
        first missing part of what an earlier attempt of this account left (a killed worker's). In the
        background (foreground=False) it leaves the run's current file and step to the set in front."""
        path = folder / raw_objects.disk_name(item.document.name)
        partial = self._partial_path(item.document)
        partial.parent.mkdir(parents=True, exist_ok=True)
        volume_hash = hashlib.sha256()
        retries = TransientRetries(settings.INGEST_TRANSIENT_RETRIES)
        if foreground:
            await self.context.report(current_step="downloading")
        document = await self._fresh_document(reader, ref, item)
        offset = partial_resume_point(partial, size=document.size, part_size=PART_SIZE)
        if offset:
            logger.info("Resuming %s at byte %d of %d", document.name, offset, document.size)
            for block in read_blocks(partial, offset):
                volume_hash.update(block)
            if foreground:
                self.context.progress.add(current_bytes_done=offset)
        with StagingFile(partial, resume_at=offset) as sink:
            while offset < document.size:
                try:
                    async with aclosing(reader.iter_download(ref, document, offset=offset)) as chunks:
                        async for chunk in chunks:
                            sink.write(chunk)
                            volume_hash.update(chunk)
                            offset += len(chunk)
                            self.context.progress.add(bytes_downloaded=len(chunk))
                            if foreground:
                                self.context.progress.add(current_bytes_done=len(chunk))
                            if self.context.progress.due():
                                await self.context.report()
                    if offset < document.size:
                        raise TransientError(f"the download of {document.name} ended at {offset} of {document.size}")
                except FloodWait as exc:
                    await sleep_flood_wait(
                        exc, account=self.context.account, doing=f"while downloading {document.name}"
                    )
                except FileReferenceExpired:
                    document = await self._fresh_document(reader, ref, item)
                except TransientError as exc:
                    try:
                        await retries.after(exc)
                    except TransientError:
                        raise SetFailed(SkipReason.DOWNLOAD_FAILED, f"{document.name}: {exc}") from exc
        partial.rename(path)
        self.whole_downloads[path] = partial
        return path, volume_hash.hexdigest()

    def _partial_path(self, document) -> Path:
        """Where this account downloads a document: kept past the run, so a later attempt resumes it."""
        return Path(settings.INGEST_STAGING_DIR) / PARTIAL_FOLDER / f"{self.context.account.pk}-{document.id}"

    def downloads_keep(self) -> None:
        """The run stops undecided (an outage, a lost lock): whole downloads still in its folder go back where
        the next attempt resumes downloads, instead of being fetched from Telegram again."""
        for path, partial in self.whole_downloads.items():
            if path.exists():
                os.replace(path, partial)

    async def _fresh_document(self, reader: TelegramGateway, ref: ChatRef, item: DocumentMessage):
        """Re-fetch the message right before downloading, so its file reference is fresh."""
        try:
            fresh = await self.context.call(lambda: reader.get_messages(ref, [item.id]))
        except TransientError as exc:
            raise SetFailed(SkipReason.DOWNLOAD_FAILED, f"{item.document.name}: {exc}") from exc
        message = fresh.get(item.id)
        if message is None or message.document is None:
            raise SetFailed(SkipReason.DOWNLOAD_FAILED, f"Message {item.id} ({item.document.name}) was deleted.")
        if (message.document.id, message.document.size) != (item.document.id, item.document.size):
            # An edit put another file under the message: going on at the offset would splice two files. What was
            # downloaded of the old one goes; the set is held (no attempt counted) and taken again whole.
            self._partial_path(item.document).unlink(missing_ok=True)
            raise SetFailed(
                SkipReason.WAITING_FOR_VOLUMES,
                f"{item.document.name} was replaced on Telegram (message {item.id} now holds another file); "
                "the set is taken again whole, from the new file, at the next cycle.",
            )
        return message.document
