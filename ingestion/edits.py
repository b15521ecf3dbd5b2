"""Edited posts: a post already ingested whose file an edit replaced is taken again as new content.

The scan reads above the watermark only, so each cycle also reads the channel's documents posted within
INGEST_EDIT_WINDOW_SECONDS at or below it: one request (the newest hundred), and only for a channel with
packages made before this cycle from posts that recent (a database read decides, free). A post edited after
its package was made whose document no package knows was replaced; it comes back with the other volumes of
its set, so a set whose volume was replaced is taken again whole. Dedupe by SHA-256 still holds: the same
bytes make no new package.
"""

from datetime import datetime, timedelta

from django.conf import settings

from core import clock
from core.db_thread import in_db_thread
from packages import selectors as package_selectors
from telegram.gateway import TelegramGateway
from telegram.records import ChatRef, DocumentMessage


async def edited_posts(
    reader: TelegramGateway, ref: ChatRef, *, chat_id: int, through: int, cycle_started: datetime, call
) -> list[DocumentMessage]:
    """The posts at or below message `through` whose file was replaced since they were ingested, with the other
    volumes of their sets, ascending; `call` wraps each request (the cycle's retry policy). Packages this cycle
    made do not count: they were made from the posts as they are."""
    window = settings.INGEST_EDIT_WINDOW_SECONDS
    if not window or through <= 0:
        return []
    since = clock.now() - timedelta(seconds=window)
    if not await in_db_thread(package_selectors.source_posts_since)(
        chat_id=chat_id, since=since, made_before=cycle_started
    ):
        return []
    page = await call(lambda: reader.search_documents(ref, min_id=0, offset_id=through + 1, min_date=since))
    replaced = await in_db_thread(package_selectors.source_posts_replaced)(chat_id=chat_id, messages=page.messages)
    if not replaced:
        return []
    volumes = {message_id for package in replaced.values() for message_id in package.source_message_ids}
    found = {message.id: message for message in page.messages if message.id in volumes}
    wanted = sorted(volumes - set(found))
    if wanted:
        others = await call(lambda: reader.get_messages(ref, wanted))
        found.update({message_id: m for message_id, m in others.items() if m is not None and m.document is not None})
    return [found[message_id] for message_id in sorted(found)]
