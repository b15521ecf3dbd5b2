"""Writing: messages.sendMessage, sendMedia, uploadMedia and forwardMessages, with Telegram's rules for who
may post where."""

from telethon.tl import functions, types

from telegram.formatting import entity_as_json, entity_from_tl
from telegram.records import (
    ALBUM_MAX,
    CAPTION_MAX,
    CHANNEL,
    GENERAL_TOPIC_ID,
    GROUP,
    PREMIUM_CAPTION_MAX,
    TEXT_MAX,
    USER,
    utf16_units,
)
from telegram.sandbox import tl, world
from telegram.sandbox.faults import RpcAnswer
from telegram.sandbox.methods.common import Call, can_post, chat, entities, reference_fresh
from telegram.sandbox.methods.files import uploaded_file
from telegram.sandbox.world import SlowModeWait


def _topic(call: Call, chat_row: dict, admin: bool, reply_to) -> int | None:
    top = getattr(reply_to, "top_msg_id", None) or getattr(reply_to, "reply_to_msg_id", None) if reply_to else None
    if not chat_row["forum"]:
        if getattr(reply_to, "top_msg_id", None):
            raise RpcAnswer(400, "TOPIC_ID_INVALID")
        return None
    topic = top or GENERAL_TOPIC_ID
    row = next(iter(call.world.topics(chat_row["id"], after=topic - 1, limit=1)), None)
    if row is None or row["id"] != topic:
        raise RpcAnswer(400, "TOPIC_DELETED")
    if row["closed"] and not admin:
        raise RpcAnswer(400, "TOPIC_CLOSED")
    return topic


def _media_document(call: Call, media) -> tuple[str, int]:
    """(kind, document id) of the media a send carries: a fresh upload, or a handle from uploadMedia."""
    if isinstance(media, types.InputMediaUploadedDocument):
        return "document", uploaded_file(call, media.file, mime_type=media.mime_type)
    if isinstance(media, types.InputMediaUploadedPhoto):
        return "photo", uploaded_file(call, media.file, mime_type="image/jpeg")
    if isinstance(media, types.InputMediaDocument | types.InputMediaPhoto):
        handle = media.id
        phone = call.key["phone"]
        document = call.world.document(getattr(handle, "id", 0))
        if document is None or handle.access_hash != tl.access_hash("document", phone, handle.id):
            raise RpcAnswer(400, "MEDIA_INVALID")
        reference_fresh(call, handle.file_reference)
        return ("photo" if isinstance(media, types.InputMediaPhoto) else "document"), document["id"]
    raise RpcAnswer(400, "MEDIA_EMPTY")


def _entities(me: dict, *, text: str, caption: bool, entities) -> list[dict]:
    """The send's formatting entities as the world keeps them, after Telegram's checks: the text's length in
    UTF-16 code units, and every entity inside the text."""
    limit = (PREMIUM_CAPTION_MAX if me["premium"] else CAPTION_MAX) if caption else TEXT_MAX
    length = utf16_units(text)
    if length > limit:
        raise RpcAnswer(400, "MEDIA_CAPTION_TOO_LONG" if caption else "MESSAGE_TOO_LONG")
    entities = [entity_from_tl(entity) for entity in entities or []]
    if any(e.offset < 0 or e.length <= 0 or e.offset + e.length > length for e in entities):
        raise RpcAnswer(400, "ENTITY_BOUNDS_INVALID")
    return [entity_as_json(entity) for entity in entities]


def _where_to_post(call: Call) -> tuple[dict, dict, bool, int | None]:
    """(me, chat row, admin, topic) of a send, after Telegram's checks of who may post where."""
    request = call.request
    me = call.me()
    chat_row, admin = chat(call, request.peer)
    if chat_row.get("migrated_to") or chat_row.get(
        "deactivated"
    ):  # upgraded to a supergroup: the old group takes no more messages
        raise RpcAnswer(400, "CHAT_ID_INVALID")
    topic = _topic(call, chat_row, admin, request.reply_to)
    if not can_post(chat_row, admin):
        raise (
            RpcAnswer(400, "CHAT_ADMIN_REQUIRED")
            if chat_row["type"] == CHANNEL
            else RpcAnswer(403, "CHAT_WRITE_FORBIDDEN")
        )
    return me, chat_row, admin, topic


def _send(call: Call, *, text: str, media=None):
    request = call.request
    me, chat_row, admin, topic = _where_to_post(call)
    if not text and media is None:
        raise RpcAnswer(400, "MESSAGE_EMPTY")
    wait = call.world.send_allowance(me["phone"], me["flood_above_per_minute"])
    if wait:
        raise RpcAnswer(420, f"FLOOD_WAIT_{wait}")
    entities = _entities(me, text=text, caption=media is not None, entities=request.entities)
    kind, document_id = _media_document(call, media) if media is not None else (None, None)
    try:
        message_id, _ = call.world.post(
            chat_row["id"],
            sender=me["phone"],
            random_id=request.random_id,
            text=text,
            topic=topic,
            kind=kind,
            document_id=document_id,
            slow_mode_seconds=0 if admin else chat_row["slow_mode_seconds"],
            entities=entities,
            silent=bool(request.silent),
            no_webpage=bool(getattr(request, "no_webpage", False)),
        )
    except SlowModeWait as exc:
        raise RpcAnswer(420, f"SLOWMODE_WAIT_{exc.seconds}") from None
    if message_id is None:
        # Telegram reports a reused random_id as a server error (500), not a 400.
        raise RpcAnswer(500, "RANDOM_ID_DUPLICATE")
    return _updates(call, me, chat_row, [(message_id, request.random_id)])


def _updates(call: Call, me: dict, chat_row: dict, posted: list[tuple[int, int]]):
    """What Telegram answers a send with: each new message, and which random_id made it."""
    updates, chats = [], [chat_row]
    for message_id, random_id in posted:
        row = call.world.message(chat_row["id"], message_id)
        document = call.world.document(row["document_id"]) if row["document_id"] is not None else None
        message = tl.message(
            chat_row, row, phone=me["phone"], dc_id=call.dc_id, document_row=document, senders={me["phone"]: me}
        )
        new = (
            types.UpdateNewMessage(message=message, pts=message_id, pts_count=1)
            if chat_row["type"] in (GROUP, USER)
            else types.UpdateNewChannelMessage(message=message, pts=message_id, pts_count=1)
        )
        updates += [types.UpdateMessageID(id=message_id, random_id=random_id), new]
    chats, users = entities(call, chats)
    return types.Updates(updates=updates, users=users, chats=chats, date=tl.date(world.clock()), seq=0)


def send_message(call: Call):
    return _send(call, text=call.request.message)


def send_media(call: Call):
    return _send(call, text=call.request.message, media=call.request.media)


def send_multi_media(call: Call):
    """messages.sendMultiMedia: an album of 2–10 photos/videos or documents, one message each, sharing one
    grouped_id; the caption is the first item's. A random_id the chat remembers posts none of it."""
    request = call.request
    me, chat_row, admin, topic = _where_to_post(call)
    items = list(request.multi_media or [])
    if not 2 <= len(items) <= ALBUM_MAX:
        raise RpcAnswer(400, "MULTI_MEDIA_TOO_LONG" if len(items) > ALBUM_MAX else "MEDIA_INVALID")
    captions = [_entities(me, text=item.message, caption=True, entities=item.entities) for item in items]
    media = [_media_document(call, item.media) for item in items]
    wait = call.world.send_allowance(me["phone"], me["flood_above_per_minute"])
    if wait:
        raise RpcAnswer(420, f"FLOOD_WAIT_{wait}")
    try:
        posted = call.world.album_post(
            chat_row["id"],
            sender=me["phone"],
            topic=topic,
            items=[
                {
                    "random_id": item.random_id,
                    "text": item.message,
                    "kind": kind,
                    "document_id": document_id,
                    "entities": entities,
                }
                for item, (kind, document_id), entities in zip(items, media, captions, strict=True)
            ],
            slow_mode_seconds=0 if admin else chat_row["slow_mode_seconds"],
            silent=bool(request.silent),
        )
    except SlowModeWait as exc:
        raise RpcAnswer(420, f"SLOWMODE_WAIT_{exc.seconds}") from None
    if posted is None:
        raise RpcAnswer(500, "RANDOM_ID_DUPLICATE")
    return _updates(call, me, chat_row, list(zip(posted, [item.random_id for item in items], strict=True)))


def delete_messages(call: Call):
    """channels.deleteMessages (a channel or supergroup) and messages.deleteMessages (a basic group, a private
    chat: the ids alone name the messages, so the sandbox looks for them in the account's groups)."""
    request = call.request
    me = call.me()
    if isinstance(request, functions.channels.DeleteMessagesRequest):
        chat_row, _ = chat(call, request.channel)
        chat_ids = [chat_row["id"]]
    else:
        chat_ids = [row["id"] for row in call.world.account_chats(me["phone"]) if row["type"] in (GROUP, USER)]
    deleted = [
        message_id
        for chat_id in chat_ids
        for message_id in call.world.messages_delete(chat_id, list(request.id), sender=me["phone"])
    ]
    return types.messages.AffectedMessages(pts=len(deleted), pts_count=len(deleted))


def update_pinned_message(call: Call):
    """messages.updatePinnedMessage: admins pin anywhere, members where they may post."""
    request = call.request
    call.me()  # logged in
    chat_row, admin = chat(call, request.peer)
    if not can_post(chat_row, admin):
        raise RpcAnswer(400, "CHAT_ADMIN_REQUIRED")
    if not call.world.message_pin(chat_row["id"], request.id, pinned=not request.unpin):
        raise RpcAnswer(400, "MESSAGE_ID_INVALID")
    chats, users = entities(call, [chat_row])
    return types.Updates(updates=[], users=users, chats=chats, date=tl.date(world.clock()), seq=0)


def forward_messages(call: Call):
    """messages.forwardMessages, answered as a copy (drop_author): the same document and caption, posted by
    the account in `to_peer`. The account must read `from_peer` and may post in `to_peer`."""
    request = call.request
    me = call.me()
    from_row, _ = chat(call, request.from_peer)
    to_row, admin = chat(call, request.to_peer)
    if to_row.get("migrated_to") or to_row.get("deactivated"):
        raise RpcAnswer(400, "CHAT_ID_INVALID")
    random_ids = list(request.random_id or [])
    if not request.id or len(random_ids) != len(request.id):
        raise RpcAnswer(400, "RANDOM_ID_INVALID")
    top = request.top_msg_id
    reply_to = types.InputReplyToMessage(reply_to_msg_id=top, top_msg_id=top) if top else None
    topic = _topic(call, to_row, admin, reply_to)
    if not can_post(to_row, admin):
        raise (
            RpcAnswer(400, "CHAT_ADMIN_REQUIRED")
            if to_row["type"] == CHANNEL
            else RpcAnswer(403, "CHAT_WRITE_FORBIDDEN")
        )
    sources = [call.world.message(from_row["id"], message_id) for message_id in request.id]
    if any(row is None for row in sources):
        raise RpcAnswer(400, "MESSAGE_ID_INVALID")
    posted = []
    for row, random_id in zip(sources, random_ids, strict=True):
        wait = call.world.send_allowance(me["phone"], me["flood_above_per_minute"])
        if wait:
            raise RpcAnswer(420, f"FLOOD_WAIT_{wait}")
        try:
            message_id, _ = call.world.post(
                to_row["id"],
                sender=me["phone"],
                random_id=random_id,
                text="" if request.drop_media_captions else row["text"],
                topic=topic,
                kind=row["kind"],
                document_id=row["document_id"],
                slow_mode_seconds=0 if admin else to_row["slow_mode_seconds"],
            )
        except SlowModeWait as exc:
            raise RpcAnswer(420, f"SLOWMODE_WAIT_{exc.seconds}") from None
        if message_id is None:
            raise RpcAnswer(500, "RANDOM_ID_DUPLICATE")
        posted.append((message_id, random_id))
    return _updates(call, me, to_row, posted)


def upload_media(call: Call):
    me = call.me()
    kind, document_id = _media_document(call, call.request.media)
    document = call.world.document(document_id)
    if kind == "photo":
        return types.MessageMediaPhoto(photo=tl.photo(document, phone=me["phone"], dc_id=call.dc_id))
    return types.MessageMediaDocument(document=tl.document(document, phone=me["phone"], dc_id=call.dc_id))


HANDLERS = {
    functions.messages.SendMessageRequest: send_message,
    functions.messages.SendMediaRequest: send_media,
    functions.messages.SendMultiMediaRequest: send_multi_media,
    functions.messages.DeleteMessagesRequest: delete_messages,
    functions.channels.DeleteMessagesRequest: delete_messages,
    functions.messages.UpdatePinnedMessageRequest: update_pinned_message,
    functions.messages.UploadMediaRequest: upload_media,
    functions.messages.ForwardMessagesRequest: forward_messages,
}
