"""The fetch stage: find the documents above a watermark, then download each volume once.

Each volume is re-fetched right before its download (fresh file reference), streamed to a staging file and
hashed in the same pass (the payload is read once); trouble resumes the download from its offset. A volume
whose raw file is kept (downloaded before, by this machine or another) is read back from the storage instead.
"""

import asyncio
import hashlib
import shutil
from contextlib import asynccontextmanager
from pathlib import Path

from django.conf import settings

from ingestion.cycle import SetFailed, db, sleep_flood_wait
from ingestion.models import SkipReason
from ingestion.selectors import Writer
from ingestion.staging import StagingFile
from packages import raw_objects
from packages import selectors as package_selectors
from packages import services as package_services
from packages.detection import ArchiveSet
from telegram.errors import FileReferenceExpired, FloodWait, TransientError
from telegram.gateway import TelegramGateway
from telegram.records import ChatRef, DocumentMessage
from telegram.retry import TransientRetries


async def documents_above(gateway: TelegramGateway, ref: ChatRef, *, min_id: int, call=None) -> list[DocumentMessage]:
    """Every document message above min_id, ascending (channel-wide in a forum), page after page until
    the gateway says nothing older is left; `call` wraps each request (the cycle's retry policy)."""
    call = call or (lambda make_call: make_call())
    found: dict[int, DocumentMessage] = {}
    offset_id: int | None = 0
    while offset_id is not None:
        page = await call(lambda offset_id=offset_id: gateway.search_documents(ref, min_id=min_id, offset_id=offset_id))
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
    """Mixed into the cycle: uses its `account`, `progress`, `tick` and `_call`."""

    async def _history(self, reader: TelegramGateway, ref: ChatRef, *, min_id: int) -> list[DocumentMessage]:
        return await documents_above(reader, ref, min_id=min_id, call=self._call)

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

    async def _volume(
        self, reader: TelegramGateway, ref: ChatRef, item: DocumentMessage, folder: Path
    ) -> tuple[Path | None, str]:
        """(the staged download, its SHA-256), or (None, the recorded SHA-256) when the volume's raw file is
        kept: a retry, or another machine's set, does not download it from Telegram again."""
        kept = await db(package_selectors.raw_file_kept)(file_uid=str(item.document.id), size=item.document.size)
        if kept is not None:
            return None, kept.hash
        return await self._download(reader, ref, item, folder)

    @asynccontextmanager
    async def _raw_files_local(self, raws, names: list[str], staged: list[Path | None], folder: Path):
        """The set's volumes as local files for the upload: this worker's staged copies, or the kept copies read
        back from the storage (in a thread: the cycle keeps its heartbeat meanwhile)."""
        if any(path is None for path in staged):
            await self.tick(current_step="reading the kept copy")
        files = raw_objects.raw_files_local(raws, names, staged=staged, under=folder)
        try:
            paths = await asyncio.to_thread(files.__enter__)
        except raw_objects.RawObjectUnreadable as exc:
            if exc.raw is not None:
                await db(package_services.raw_file_lost)(raw=exc.raw)
            raise SetFailed(SkipReason.DOWNLOAD_FAILED, f"{exc}; it is downloaded from Telegram again.") from exc
        try:
            yield paths
        finally:
            await asyncio.to_thread(files.__exit__, None, None, None)

    async def _download(
        self, reader: TelegramGateway, ref: ChatRef, item: DocumentMessage, folder: Path
    ) -> tuple[Path, str]:
        """Stream one volume to disk, hashing in the same pass; resume from the offset on trouble."""
        path = folder / package_services.disk_name(item.document.name)
        volume_hash = hashlib.sha256()
        offset = 0
        retries = TransientRetries(settings.INGEST_TRANSIENT_RETRIES)
        await self.tick(current_step="downloading")
        document = await self._fresh_document(reader, ref, item)
        with StagingFile(path) as sink:
            while offset < document.size:
                try:
                    async for chunk in reader.iter_download(ref, document, offset=offset):
                        sink.write(chunk)
                        volume_hash.update(chunk)
                        offset += len(chunk)
                        self.progress.add(bytes_downloaded=len(chunk), current_bytes_done=len(chunk))
                        if self.progress.due():
                            await self.tick()
                    if offset < document.size:
                        raise TransientError(f"the download of {document.name} ended at {offset} of {document.size}")
                except FloodWait as exc:
                    await sleep_flood_wait(exc, account=self.account, doing=f"while downloading {document.name}")
                except FileReferenceExpired:
                    document = await self._fresh_document(reader, ref, item)
                except TransientError as exc:
                    try:
                        await retries.after(exc)
                    except TransientError:
                        raise SetFailed(SkipReason.DOWNLOAD_FAILED, f"{document.name}: {exc}") from exc
        return path, volume_hash.hexdigest()

    async def _fresh_document(self, reader: TelegramGateway, ref: ChatRef, item: DocumentMessage):
        """Re-fetch the message right before downloading, so its file reference is fresh."""
        try:
            fresh = await self._call(lambda: reader.get_messages(ref, [item.id]))
        except TransientError as exc:
            raise SetFailed(SkipReason.DOWNLOAD_FAILED, f"{item.document.name}: {exc}") from exc
        message = fresh.get(item.id)
        if message is None or message.document is None:
            raise SetFailed(SkipReason.DOWNLOAD_FAILED, f"Message {item.id} ({item.document.name}) was deleted.")
        return message.document
