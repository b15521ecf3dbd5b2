"""The upload stage: each volume to the destination in order, split first when it is above the writer's limit.

Every part carries a random_id fixed by the content (and the upload's generation), so a retry after a crash
is answered RANDOM_ID_DUPLICATE instead of posting twice; a package whose destination message was deleted
is uploaded again with a new generation, only the parts that vanished.
"""

import asyncio
import hashlib
from pathlib import Path

from django.conf import settings

from core.db_thread import in_db_thread
from ingestion import notifications
from ingestion.cycle import AccountRefused, CycleContext, SetFailed, sleep_flood_wait
from ingestion.models import SkipReason
from ingestion.selectors import Writer
from packages import services as package_services
from packages.catalog import catalog_line
from packages.models import Package
from telegram.errors import (
    AccountRestricted,
    AuthRequired,
    FileTooLarge,
    FloodWait,
    NotFound,
    TargetForbidden,
    TransientError,
)
from telegram.gateway import TelegramGateway
from telegram.records import ChatRef, DocumentMessage
from telegram.retry import TransientRetries


def random_id_for(content_hash: str, part_index: int, generation: int = 0) -> int:
    """The same upload always carries the same random_id, so a retry cannot post twice."""
    # A new generation (an upload again after the destination message was deleted) gets fresh random_ids:
    # Telegram remembers the old ones.
    key = f"{content_hash}:{part_index}" + (f":{generation}" if generation else "")
    digest = hashlib.sha256(key.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True) or 1


class UploadStage:
    """Uploads a set's volumes to the destination for one cycle, given its context."""

    def __init__(self, context: CycleContext):
        self.context = context

    async def upload(
        self,
        writer: Writer,
        items: list[DocumentMessage],
        paths: list[Path],
        hashes: list[str],
        folder: Path,
        content_hash: str,
        generation: int,
        live: dict[str, int],
    ):
        """Each volume in order; one above the writer's limit goes as byte-split parts, checked before upload."""
        gateway = await self.context.gateway(writer.account)
        plan = package_services.upload_plan(
            volumes=[(item.document.name, item.document.size) for item in items],
            limit=writer.account.upload_limit_bytes,
        )
        part_paths = {}
        for volume_index, source in enumerate(paths):
            parts = [part for part in plan if part.volume_index == volume_index]
            if len(parts) == 1:
                part_paths[parts[0]] = source
                continue
            await self.context.report(current_step="splitting")
            try:
                written = await asyncio.to_thread(
                    package_services.volume_split,
                    source=source,
                    parts=parts,
                    folder=folder,
                    expected_sha256=hashes[volume_index],
                )
            except package_services.SplitMismatch as exc:
                await in_db_thread(notifications.notify_split_mismatch)(
                    file_name=items[volume_index].document.name, error=str(exc)
                )
                raise SetFailed(SkipReason.UPLOAD_FAILED, f"Splitting failed: {exc}") from exc
            part_paths.update(zip(parts, written, strict=True))
        await self.context.report(
            current_step="uploading", current_bytes_done=0, current_bytes_total=sum(p.length for p in plan)
        )
        dest_ids = []
        for index, part in enumerate(plan):
            if part.name in live:  # still in the destination: only what vanished goes again
                dest_ids.append(live[part.name])
                continue
            path = part_paths[part]
            random_id = random_id_for(content_hash, index, generation)
            source = items[part.volume_index]
            caption = catalog_line(
                content_hash=content_hash,
                part=index + 1,
                parts=len(plan),
                source_chat_id=source.chat_id,
                source_message_id=source.id,
                topic_id=source.topic_id,
            )
            message_id = await self._upload_part(writer, gateway, path, part, random_id, caption)
            dest_ids.append(message_id)
            if path.parent == folder:
                path.unlink(missing_ok=True)
            self.context.progress.add(bytes_uploaded=part.length, current_bytes_done=part.length)
            await self.context.report()
        return dest_ids, [part.name for part in plan]

    async def live_parts(self, package: Package, writer: Writer) -> dict[str, int]:
        """Part name → message id of the parts of a package still in the destination, checked right now."""
        gateway = await self.context.gateway(writer.account)
        found = await self.context.call(lambda: gateway.get_messages(writer.ref, list(package.dest_message_ids)))
        return {
            name: message_id
            for name, message_id in zip(package.dest_part_names, package.dest_message_ids, strict=False)
            if found.get(message_id) is not None
        }

    async def _upload_part(
        self, writer: Writer, gateway: TelegramGateway, path: Path, part, random_id: int, caption: str
    ) -> int:
        retries = TransientRetries(settings.INGEST_TRANSIENT_RETRIES)
        while True:
            try:
                sent = await gateway.upload_document(
                    writer.ref, path=str(path), file_name=part.name, random_id=random_id, caption=caption
                )
            except FloodWait as exc:
                await sleep_flood_wait(exc, account=writer.account, doing=f"while uploading {part.name}")
                continue
            except FileTooLarge as exc:
                raise SetFailed(SkipReason.SIZE_LIMIT, f"{part.name}: {exc}") from exc
            except TransientError as exc:
                try:
                    await retries.after(exc)
                except TransientError:
                    raise SetFailed(SkipReason.UPLOAD_FAILED, f"{part.name}: {exc}") from exc
                continue
            except (AuthRequired, AccountRestricted) as exc:
                raise AccountRefused(writer.account, exc) from exc
            except (TargetForbidden, NotFound) as exc:
                await in_db_thread(notifications.notify_destination_unreachable)(error=f"{part.name}: {exc}")
                raise SetFailed(SkipReason.UPLOAD_FAILED, f"The destination refused {part.name}: {exc}") from exc
            if not sent.duplicate:
                return sent.id
            # Posted before a crash: find that message instead of posting again.
            found = await self._find_uploaded(gateway, writer.ref, part)
            if found is not None:
                return found
            raise SetFailed(
                SkipReason.UPLOAD_FAILED,
                f"{part.name} was already sent (same random_id) but cannot be found in the destination.",
            )

    async def _find_uploaded(self, gateway: TelegramGateway, ref: ChatRef, part) -> int | None:
        offset_id: int | None = 0
        for _ in range(10):
            page = await self.context.call(
                lambda offset_id=offset_id: gateway.search_documents(ref, min_id=0, offset_id=offset_id)
            )
            for message in page.messages:
                if message.document and message.document.name == part.name and message.document.size == part.length:
                    return message.id
            offset_id = page.next_offset_id
            if offset_id is None:
                return None
        return None
