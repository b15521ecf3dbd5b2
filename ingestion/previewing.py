"""The preview stage: the photo posted with an archive becomes its package's preview.

The photo of the archive's album, or one posted next to it in its topic within
PACKAGE_PREVIEW_PHOTO_WINDOW_SECONDS whose caption names it (`packages.previews.photo_for_archive`). A package
without one keeps the first image inside its archive, which the listing child thumbnails.
"""

import logging
from datetime import datetime, timedelta

from django.conf import settings

from core.db_thread import in_db_thread
from ingestion.cycle import CycleContext, ScanTarget
from packages import previews
from packages.models import Package
from telegram.errors import AccountRestricted, AuthRequired, TelegramError
from telegram.gateway import TelegramGateway
from telegram.records import GENERAL_TOPIC_ID, ChatRef, DocumentMessage

logger = logging.getLogger(__name__)

PHOTO_PAGES_MAX = 20  # photos read for previews per chat and cycle: 2,000 at most


class PreviewStage:
    """The posted photo as a package's preview, for one cycle given its context; each chat's photos are read
    once a cycle."""

    def __init__(self, context: CycleContext):
        self.context = context
        self.photos: dict[int, list[DocumentMessage]] = {}  # photos of each chat read this cycle
        self.photos_since: dict[int, datetime] = {}  # since when the scan wants them
        self.photo_window = settings.PACKAGE_PREVIEW_PHOTO_WINDOW_SECONDS

    def photos_wanted_since(self, ref: ChatRef, messages: list[DocumentMessage]) -> None:
        if messages:
            self.photos_since[ref.id] = min(message.date for message in messages)

    async def _photos_near(self, reader: TelegramGateway, target: ScanTarget, first: DocumentMessage):
        """The photos posted within the window of an archive, in its topic. The chat's photos since the scan's
        oldest new document (less the window) are read once per cycle, channel-wide, a hundred a request, and
        only when a package is actually made."""
        chat_id = target.ref.id
        if chat_id not in self.photos:
            since = min(self.photos_since.get(chat_id, first.date), first.date) - timedelta(seconds=self.photo_window)
            photos, offset_id = [], 0
            for _ in range(PHOTO_PAGES_MAX):
                page = await self.context.call(
                    lambda offset_id=offset_id: reader.search_photos(target.ref, min_date=since, offset_id=offset_id)
                )
                photos += page.messages
                if page.next_offset_id is None:
                    break
                offset_id = page.next_offset_id
            self.photos[chat_id] = photos
        window = timedelta(seconds=self.photo_window)
        return [
            photo
            for photo in self.photos[chat_id]
            if abs(photo.date - first.date) <= window
            and (target.topic is None or (photo.topic_id or GENERAL_TOPIC_ID) == target.topic_id)
        ]

    async def photo_preview(
        self, reader: TelegramGateway, target: ScanTarget, items: list[DocumentMessage], package: Package
    ) -> None:
        """The photo posted with the archive becomes its preview (one small download). A package without one
        keeps the image from inside its archive; a failure here fails nothing."""
        first = items[0]
        try:
            photos = await self._photos_near(reader, target, first)
            photo = previews.photo_for_archive(
                file_name=package.file_name,
                caption=first.text,
                grouped_id=first.grouped_id,
                posted_at=first.date,
                photos=photos,
            )
            if photo is None:
                return
            data = bytearray()
            async for chunk in reader.iter_download(target.ref, photo.photo):
                data += chunk
                if len(data) > previews.PHOTO_MAX_BYTES:
                    return
            await in_db_thread(previews.preview_from_photo)(package=package, message_id=photo.id, data=bytes(data))
        except (AuthRequired, AccountRestricted):
            raise
        except (TelegramError, OSError) as exc:
            logger.warning("No photo preview for %s in %s: %s", package.file_name, target.label, exc)
