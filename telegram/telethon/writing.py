"""Writing to chats: messages and albums sent (a retried random_id posts nothing twice), edited, deleted, pinned,
and copied from another chat."""

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from telethon import errors, functions, types

from telegram.errors import NotFound
from telegram.formatting import entity_to_tl
from telegram.records import (
    GENERAL_TOPIC_ID,
    GROUP,
    USER,
    ChatRef,
    MediaHandle,
    MessageEntity,
    SentMessage,
    album_random_id,
)
from telegram.telethon.errors import maps_errors
from telegram.telethon.peers import input_channel, input_peer, reply_to


class WritingCalls:
    @maps_errors
    async def send_message(
        self,
        chat: ChatRef,
        *,
        random_id: int,
        text: str = "",
        entities: Sequence[MessageEntity] = (),
        media: MediaHandle | None = None,
        topic_id: int | None = None,
        silent: bool = False,
        link_preview: bool = True,
    ) -> SentMessage:
        tl_entities = [entity_to_tl(entity) for entity in entities] or None
        if media is None:
            request = functions.messages.SendMessageRequest(
                peer=input_peer(chat),
                message=text,
                entities=tl_entities,
                random_id=random_id,
                reply_to=reply_to(topic_id),
                silent=silent or None,
                no_webpage=not link_preview or None,
            )
        else:
            request = functions.messages.SendMediaRequest(
                peer=input_peer(chat),
                media=_input_media(media),
                message=text,
                entities=tl_entities,
                random_id=random_id,
                reply_to=reply_to(topic_id),
                silent=silent or None,
            )
        return await self._send(chat, request)

    @maps_errors
    async def send_album(
        self,
        chat: ChatRef,
        *,
        random_id: int,
        media: Sequence[MediaHandle],
        text: str = "",
        entities: Sequence[MessageEntity] = (),
        topic_id: int | None = None,
        silent: bool = False,
    ) -> SentMessage:
        tl_entities = [entity_to_tl(entity) for entity in entities] or None
        request = functions.messages.SendMultiMediaRequest(
            silent=silent or None,
            peer=input_peer(chat),
            multi_media=[
                types.InputSingleMedia(
                    media=_input_media(handle),
                    random_id=album_random_id(random_id, index),
                    message=text if index == 0 else "",
                    entities=tl_entities if index == 0 else None,
                )
                for index, handle in enumerate(media)
            ],
            reply_to=reply_to(topic_id),
        )
        sent, result = await self._send_answered(chat, request, random_id=random_id)
        if result is None:
            return sent
        others = [_sent_id_and_date(result, album_random_id(random_id, i))[0] for i in range(1, len(media))]
        return replace(sent, album_ids=tuple(i for i in others if i is not None))

    @maps_errors
    async def edit_message(
        self,
        chat: ChatRef,
        message_id: int,
        *,
        text: str = "",
        entities: Sequence[MessageEntity] = (),
        media: MediaHandle | None = None,
        link_preview: bool = True,
    ) -> None:
        request = functions.messages.EditMessageRequest(
            peer=input_peer(chat),
            id=message_id,
            message=text,
            entities=[entity_to_tl(entity) for entity in entities],
            media=_input_media(media) if media is not None else None,
            no_webpage=not link_preview or None,
        )
        try:
            await self._client(request)
        except errors.MessageNotModifiedError:
            return  # already says this: an edit retried after a crash

    @maps_errors
    async def delete_messages(self, chat: ChatRef, ids: Sequence[int]) -> None:
        if chat.type in (GROUP, USER):
            await self._client(functions.messages.DeleteMessagesRequest(id=list(ids), revoke=True))
        else:
            await self._client(functions.channels.DeleteMessagesRequest(channel=input_channel(chat), id=list(ids)))

    @maps_errors
    async def pin_message(self, chat: ChatRef, message_id: int, *, unpin: bool = False) -> None:
        request = functions.messages.UpdatePinnedMessageRequest(
            peer=input_peer(chat), id=message_id, silent=True, unpin=unpin or None
        )
        await self._client(request)

    @maps_errors
    async def copy_message(
        self,
        from_chat: ChatRef,
        message_id: int,
        to_chat: ChatRef,
        *,
        random_id: int,
        topic_id: int | None = None,
        caption: str | None = None,
    ) -> SentMessage:
        if caption:
            return await self._copy_with_caption(from_chat, message_id, to_chat, random_id, topic_id, caption)
        request = functions.messages.ForwardMessagesRequest(
            from_peer=input_peer(from_chat),
            id=[message_id],
            to_peer=input_peer(to_chat),
            random_id=[random_id],
            drop_author=True,  # a copy, not a forward: the destination channel is not named
            drop_media_captions=caption == "",
            top_msg_id=topic_id if topic_id not in (None, GENERAL_TOPIC_ID) else None,
        )
        return await self._send(to_chat, request, random_id=random_id)

    async def _copy_with_caption(
        self, from_chat: ChatRef, message_id: int, to_chat: ChatRef, random_id: int, topic_id: int | None, caption: str
    ) -> SentMessage:
        """forwardMessages cannot change a caption: the same document (read fresh, for its file reference) is sent
        again with the new one."""
        message = (await self.get_messages(from_chat, [message_id]))[message_id]
        if message is None or message.document is None:
            raise NotFound(f"Message {message_id} of chat {from_chat.id} is gone or holds no file.")
        location = message.document.location
        document = types.InputDocument(
            id=location["id"],
            access_hash=location["access_hash"],
            file_reference=bytes.fromhex(location["file_reference"]),
        )
        request = functions.messages.SendMediaRequest(
            peer=input_peer(to_chat),
            media=types.InputMediaDocument(id=document),
            message=caption,
            random_id=random_id,
            reply_to=reply_to(topic_id),
        )
        return await self._send(to_chat, request)

    async def _send(self, chat: ChatRef, request, *, random_id: int | None = None) -> SentMessage:
        return (await self._send_answered(chat, request, random_id=random_id))[0]

    async def _send_answered(self, chat: ChatRef, request, *, random_id: int | None = None):
        """(what was sent, Telegram's answer: None when the random_id was sent before)."""
        random_id = request.random_id if random_id is None else random_id
        try:
            # One attempt, straight to the sender: Telegram reports a reused random_id as a server error,
            # which Telethon's request loop would retry after 2 s sleeps. Callers own every other retry.
            result = await self._client._sender.send(functions.InvokeWithoutUpdatesRequest(request))
        except errors.RandomIdDuplicateError:
            # This random_id was sent before (a retry after a crash): it counts as sent, not as an error.
            return SentMessage(chat_id=chat.id, id=None, random_id=random_id, duplicate=True), None
        message_id, date = _sent_id_and_date(result, random_id)
        return SentMessage(chat_id=chat.id, id=message_id, random_id=random_id, date=date), result


def _input_media(handle: MediaHandle) -> types.TypeInputMedia:
    payload = handle.payload
    ids = {
        "id": payload["id"],
        "access_hash": payload["access_hash"],
        "file_reference": bytes.fromhex(payload["file_reference"]),
    }
    if handle.kind == "photo":
        return types.InputMediaPhoto(id=types.InputPhoto(**ids))
    return types.InputMediaDocument(id=types.InputDocument(**ids))


def _sent_id_and_date(result, random_id: int) -> tuple[int | None, datetime | None]:
    """The id and date of the message a send created, from the updates Telegram answers with."""
    if isinstance(result, types.UpdateShortSentMessage):
        return result.id, result.date
    updates = getattr(result, "updates", [])
    message_id = next(
        (u.id for u in updates if isinstance(u, types.UpdateMessageID) and u.random_id == random_id),
        None,
    )
    for update in updates:
        if isinstance(update, types.UpdateNewMessage | types.UpdateNewChannelMessage) and (
            message_id is None or update.message.id == message_id
        ):
            return update.message.id, update.message.date
    return message_id, None
