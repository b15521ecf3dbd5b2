"""Reading chats: last message ids, a forum's topics, pages of documents and photos, and messages read fresh."""

from collections.abc import Sequence
from datetime import datetime

from telethon import errors, functions, types

from telegram.errors import TargetForbidden
from telegram.records import (
    GENERAL_TOPIC_ID,
    GROUP,
    HISTORY_PAGE,
    LAST_MESSAGE_BATCH,
    TOPICS_PAGE,
    USER,
    ChatRef,
    DocumentInfo,
    DocumentMessage,
    DocumentPage,
    TopicInfo,
)
from telegram.telethon.errors import mapped_errors, maps_errors
from telegram.telethon.peers import input_channel, input_peer


class ReadingCalls:
    @maps_errors
    async def get_last_message_ids(self, chats: Sequence[ChatRef]) -> dict[int, int]:
        last_ids = {}
        for start in range(0, len(chats), LAST_MESSAGE_BATCH):
            last_ids |= await self._last_message_ids(chats[start : start + LAST_MESSAGE_BATCH])
        return last_ids

    async def _last_message_ids(self, batch: Sequence[ChatRef]) -> dict[int, int]:
        """One request per batch; a chat the account left fails the whole batch, so it is halved until the
        chats it cannot see are alone (and left out: their scan reports the error)."""
        request = functions.messages.GetPeerDialogsRequest(
            peers=[types.InputDialogPeer(input_peer(chat)) for chat in batch]
        )
        try:
            with mapped_errors():
                result = await self._client(request)
        except TargetForbidden:
            if len(batch) == 1:
                return {}
            half = len(batch) // 2
            return await self._last_message_ids(batch[:half]) | await self._last_message_ids(batch[half:])
        return {_peer_chat_id(dialog.peer): dialog.top_message for dialog in result.dialogs}

    @maps_errors
    async def list_topics(self, chat: ChatRef, *, offset_topic_id: int = 0) -> list[TopicInfo]:
        # Telegram pages topics by activity (or creation date), not by id: read them all once per gateway,
        # then serve id-ordered pages from memory. A new listing (offset 0) reads them again.
        if offset_topic_id == 0 or chat.id not in self._topics:
            self._topics[chat.id] = await self._fetch_topics(chat)
        return [topic for topic in self._topics[chat.id] if topic.id > offset_topic_id][:TOPICS_PAGE]

    async def _fetch_topics(self, chat: ChatRef) -> list[TopicInfo]:
        topics: dict[int, TopicInfo] = {}
        offset_date, offset_id, offset_topic = None, 0, 0
        while True:
            try:
                result = await self._client(
                    functions.messages.GetForumTopicsRequest(
                        peer=input_peer(chat),
                        offset_date=offset_date,
                        offset_id=offset_id,
                        offset_topic=offset_topic,
                        limit=TOPICS_PAGE,
                    )
                )
            except errors.RPCError as exc:
                if exc.message == "CHANNEL_FORUM_MISSING":  # not a forum (any more): no topics
                    return []
                raise
            page = [topic for topic in result.topics if isinstance(topic, types.ForumTopic)]
            new = [topic for topic in page if topic.id not in topics]
            for topic in new:
                topics[topic.id] = TopicInfo(id=topic.id, title=topic.title, top_message_id=topic.top_message)
            if len(result.topics) < TOPICS_PAGE or not new:
                break
            last = page[-1]
            if result.order_by_create_date:
                offset_date = last.date
            else:
                dates = {message.id: getattr(message, "date", None) for message in result.messages}
                offset_date = dates.get(last.top_message)
            offset_id, offset_topic = last.top_message, last.id
        return sorted(topics.values(), key=lambda topic: topic.id)

    @maps_errors
    async def search_documents(
        self,
        chat: ChatRef,
        *,
        min_id: int,
        offset_id: int = 0,
        topic_id: int | None = None,
        min_date: datetime | None = None,
    ) -> DocumentPage:
        # Paged as Telethon's own iterator pages: Telegram does not honour min_id/max_id near the top of
        # history, and some chats answer short pages mid-history, so ids are checked here, and only an
        # empty page, a whole answer (not a slice) or reaching min_id (or min_date) ends the search.
        if min_date is not None:
            min_date = min_date.replace(microsecond=0)  # Telegram dates are whole seconds
        result = await self._search(
            chat, types.InputMessagesFilterDocument(), offset_id=offset_id, topic_id=topic_id, min_date=min_date
        )
        forum = _is_forum(result, chat)
        page = [
            message
            for message in result.messages
            if isinstance(message, types.Message)
            and message.id > min_id
            and (not offset_id or message.id < offset_id)
            and (min_date is None or message.date >= min_date)
        ]
        lowest = min((message.id for message in result.messages), default=0)
        reached_date = min_date is not None and any(message.date < min_date for message in result.messages)
        done = _last_search_page(result, offset_id=offset_id) or lowest <= min_id + 1 or reached_date
        return DocumentPage(
            messages=[_document_message(chat, message, forum) for message in page],
            next_offset_id=None if done else lowest,
        )

    @maps_errors
    async def search_photos(self, chat: ChatRef, *, min_date: datetime, offset_id: int = 0) -> DocumentPage:
        result = await self._search(chat, types.InputMessagesFilterPhotos(), offset_id=offset_id, min_date=min_date)
        forum = _is_forum(result, chat)
        page = [
            message
            for message in result.messages
            if isinstance(message, types.Message)
            and isinstance(message.media, types.MessageMediaPhoto)
            and (not offset_id or message.id < offset_id)
        ]
        # Dates go down as ids do: a page that reached min_date is the last too.
        done = _last_search_page(result, offset_id=offset_id) or any(m.date < min_date for m in result.messages)
        return DocumentPage(
            messages=[_document_message(chat, message, forum) for message in page if message.date >= min_date],
            next_offset_id=None if done else min(message.id for message in result.messages),
        )

    async def _search(
        self, chat: ChatRef, message_filter, *, offset_id: int, min_date: datetime | None = None, topic_id=None
    ):
        """One page of messages.search in a chat (or one topic of a forum), newest first below offset_id."""
        return await self._client(
            functions.messages.SearchRequest(
                peer=input_peer(chat),
                q="",
                filter=message_filter,
                min_date=min_date,
                max_date=None,
                offset_id=offset_id,
                add_offset=0,
                limit=HISTORY_PAGE,
                max_id=0,
                min_id=0,
                hash=0,
                top_msg_id=topic_id,
            )
        )

    @maps_errors
    async def get_messages(self, chat: ChatRef, ids: Sequence[int]) -> dict[int, DocumentMessage | None]:
        found: dict[int, DocumentMessage | None] = dict.fromkeys(ids)
        for start in range(0, len(ids), HISTORY_PAGE):
            message_ids = [types.InputMessageID(message_id) for message_id in ids[start : start + HISTORY_PAGE]]
            if chat.type in (GROUP, USER):
                # Basic groups and private chats share the account's message box: ids are unique to one chat there.
                result = await self._client(functions.messages.GetMessagesRequest(id=message_ids))
            else:
                result = await self._client(
                    functions.channels.GetMessagesRequest(channel=input_channel(chat), id=message_ids)
                )
            forum = _is_forum(result, chat)
            for message in result.messages:
                if (
                    isinstance(message, types.Message | types.MessageService)
                    and message.id in found
                    and _peer_chat_id(message.peer_id) == chat.id
                ):
                    found[message.id] = _document_message(chat, message, forum)
        return found


def _last_search_page(result, *, offset_id: int) -> bool:
    """Whether a messages.search page ends the search: an empty page, a whole answer (not a slice), or a first
    page holding every match (Telegram's count, when it says it is exact)."""
    whole = (
        not offset_id and not getattr(result, "inexact", False) and len(result.messages) >= getattr(result, "count", 0)
    )
    return not result.messages or whole or isinstance(result, types.messages.Messages)


def _peer_chat_id(peer: types.TypePeer) -> int | None:
    if isinstance(peer, types.PeerChannel):
        return peer.channel_id
    if isinstance(peer, types.PeerChat):
        return peer.chat_id
    if isinstance(peer, types.PeerUser):
        return peer.user_id
    return None


def _is_forum(result, chat: ChatRef) -> bool:
    """Whether the chat is a forum, from the chat objects Telegram sends along with messages."""
    return any(isinstance(c, types.Channel) and c.id == chat.id and c.forum for c in getattr(result, "chats", ()))


def _topic_id(message: types.Message | types.MessageService, forum: bool) -> int | None:
    if not forum:
        return None
    reply = message.reply_to
    if isinstance(reply, types.MessageReplyHeader) and reply.forum_topic:
        return reply.reply_to_top_id or reply.reply_to_msg_id
    return GENERAL_TOPIC_ID  # General's messages carry no topic header


def _reply_to_id(message: types.Message | types.MessageService) -> int | None:
    """The message this one answers; a forum message's header names its topic, which is no answer."""
    reply = message.reply_to
    if not isinstance(reply, types.MessageReplyHeader) or reply.reply_to_msg_id is None:
        return None
    if reply.forum_topic and not reply.reply_to_top_id:
        return None
    return reply.reply_to_msg_id


def _document_message(chat: ChatRef, message: types.Message | types.MessageService, forum: bool) -> DocumentMessage:
    media = getattr(message, "media", None)
    document = photo = None
    if isinstance(media, types.MessageMediaDocument) and isinstance(media.document, types.Document):
        document = _document_info(media.document)
    if isinstance(media, types.MessageMediaPhoto) and isinstance(media.photo, types.Photo):
        photo = _photo_info(media.photo)
    return DocumentMessage(
        chat_id=chat.id,
        id=message.id,
        date=message.date,
        topic_id=_topic_id(message, forum),
        text=getattr(message, "message", "") or "",
        document=document,
        photo=photo,
        grouped_id=getattr(message, "grouped_id", None),
        reply_to_id=_reply_to_id(message),
        edit_date=getattr(message, "edit_date", None),
    )


def _photo_info(photo: types.Photo) -> DocumentInfo | None:
    """The photo's largest plain size, as a document to download."""
    sizes = [size for size in photo.sizes if isinstance(size, types.PhotoSize | types.PhotoSizeProgressive)]
    if not sizes:
        return None
    largest = max(sizes, key=lambda size: size.w * size.h)
    byte_size = largest.size if isinstance(largest, types.PhotoSize) else max(largest.sizes)
    return DocumentInfo(
        id=photo.id,
        name="photo.jpg",
        size=byte_size,
        mime_type="image/jpeg",
        location={
            "photo": True,
            "id": photo.id,
            "access_hash": photo.access_hash,
            "file_reference": photo.file_reference.hex(),
            "dc_id": photo.dc_id,
            "thumb_size": largest.type,
        },
    )


def _document_info(document: types.Document) -> DocumentInfo:
    name = next(
        (a.file_name for a in document.attributes if isinstance(a, types.DocumentAttributeFilename)),
        "",
    )
    return DocumentInfo(
        id=document.id,
        name=name,
        size=document.size,
        mime_type=document.mime_type or "application/octet-stream",
        location={
            "id": document.id,
            "access_hash": document.access_hash,
            "file_reference": document.file_reference.hex(),
            "dc_id": document.dc_id,
        },
    )
