"""Telegram's TL objects built from rows of the sandbox world, as Telegram's servers would send them."""

import hashlib
import json
import struct
from datetime import UTC, datetime

from telethon.tl import types

from telegram.formatting import entity_to_tl
from telegram.records import CHANNEL, GENERAL_TOPIC_ID, GROUP, USER, MessageEntity
from telegram.sandbox import world
from telegram.sandbox.content import PICTURE_SIZE
from telegram.sandbox.world import BASE_DATE, DC_ADDRESSES, DC_PORT

# A file reference carries when it was issued and the message it came from (0, 0 for an uploaded media).
_REFERENCE = struct.Struct(">dqq")
EMPTY_PHOTO = types.ChatPhotoEmpty()
NOTIFY = types.PeerNotifySettings()


def date(timestamp: float) -> datetime:
    return datetime.fromtimestamp(timestamp, UTC)


def access_hash(*parts) -> int:
    """Deterministic, per account as Telegram's are: the same object has another hash for another account."""
    digest = hashlib.sha256(":".join(str(part) for part in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


def file_reference(*, chat_id: int = 0, message_id: int = 0) -> bytes:
    return _REFERENCE.pack(world.clock(), chat_id, message_id)


def file_reference_read(reference: bytes) -> tuple[float, int, int] | None:
    """(issued_at, chat_id, message_id), or None for bytes that are no reference of this server."""
    if len(reference) != _REFERENCE.size:
        return None
    return _REFERENCE.unpack(reference)


def user(account: dict, *, is_self: bool) -> types.User:
    return types.User(
        id=account["user_id"],
        is_self=is_self,
        access_hash=access_hash("user", account["phone"]),
        first_name=account["first_name"],
        last_name=account["last_name"] or None,
        username=account["username"] or None,
        phone=account["phone"].lstrip("+"),
        premium=bool(account["premium"]),
    )


def person(chat: dict, *, phone: str) -> types.User:
    """A person (a `user` chat of the world) as the account `phone` sees them: its own access hash."""
    return types.User(
        id=chat["id"],
        access_hash=access_hash("user", phone, chat["id"]),
        first_name=chat["title"],
        username=chat["username"] or None,
    )


def peer(chat: dict) -> types.PeerChannel | types.PeerChat | types.PeerUser:
    if chat["type"] == GROUP:
        return types.PeerChat(chat_id=chat["id"])
    if chat["type"] == USER:
        return types.PeerUser(user_id=chat["id"])
    return types.PeerChannel(channel_id=chat["id"])


def chat_entity(
    chat: dict, *, phone: str, admin: bool, left: bool = False, members_count: int | None = None
) -> types.Channel | types.Chat:
    """The chat as `phone` sees it; `left` when it is not in it (a public chat, by its @username)."""
    banned = types.ChatBannedRights(until_date=None, send_messages=not chat["members_can_post"])
    created = BASE_DATE
    if chat["type"] == GROUP:
        migrated_to = chat.get("migrated_to")
        return types.Chat(
            id=chat["id"],
            title=chat["title"],
            photo=EMPTY_PHOTO,
            participants_count=members_count or 0,
            left=left,
            date=created,
            version=1,
            admin_rights=types.ChatAdminRights(post_messages=True) if admin else None,
            default_banned_rights=banned,
            deactivated=bool(migrated_to or chat.get("deactivated")),
            migrated_to=(
                types.InputChannel(migrated_to, access_hash("chat", phone, migrated_to)) if migrated_to else None
            ),
        )
    return types.Channel(
        id=chat["id"],
        title=chat["title"],
        photo=EMPTY_PHOTO,
        date=created,
        access_hash=access_hash("chat", phone, chat["id"]),
        broadcast=chat["type"] == CHANNEL,
        megagroup=chat["type"] != CHANNEL,
        forum=bool(chat["forum"]),
        slowmode_enabled=bool(chat["slow_mode_seconds"]),
        admin_rights=types.ChatAdminRights(post_messages=True, manage_topics=True) if admin else None,
        default_banned_rights=banned if chat["type"] != CHANNEL else None,
        left=left,
        username=chat["username"] or None,
        participants_count=members_count,
        join_request=bool(chat.get("join_request")),
    )


def document(row: dict, *, phone: str, dc_id: int, chat_id: int = 0, message_id: int = 0) -> types.Document:
    return types.Document(
        id=row["id"],
        access_hash=access_hash("document", phone, row["id"]),
        file_reference=file_reference(chat_id=chat_id, message_id=message_id),
        date=BASE_DATE,
        mime_type=row["mime_type"],
        size=row["size"],
        dc_id=dc_id,
        attributes=[types.DocumentAttributeFilename(file_name=row["name"])],
    )


def photo(row: dict, *, phone: str, dc_id: int, chat_id: int = 0, message_id: int = 0) -> types.Photo:
    return types.Photo(
        id=row["id"],
        access_hash=access_hash("document", phone, row["id"]),
        file_reference=file_reference(chat_id=chat_id, message_id=message_id),
        date=BASE_DATE,
        sizes=[types.PhotoSize(type="y", w=PICTURE_SIZE[0], h=PICTURE_SIZE[1], size=row["size"])],
        dc_id=dc_id,
    )


def media(row: dict | None, kind: str | None, **where) -> types.TypeMessageMedia | None:
    if row is None:
        return None
    if kind == "photo":
        return types.MessageMediaPhoto(photo=photo(row, **where))
    return types.MessageMediaDocument(document=document(row, **where))


def reply_header(chat: dict, topic: int | None, reply_to: int | None = None) -> types.MessageReplyHeader | None:
    # A message in a forum topic replies to the topic's first message (a reply inside it names the topic as
    # its top); General's carry no header unless they reply to a message.
    if chat["forum"] and topic not in (None, GENERAL_TOPIC_ID):
        if reply_to:
            return types.MessageReplyHeader(forum_topic=True, reply_to_msg_id=reply_to, reply_to_top_id=topic)
        return types.MessageReplyHeader(forum_topic=True, reply_to_msg_id=topic)
    if reply_to:
        return types.MessageReplyHeader(reply_to_msg_id=reply_to)
    return None


def message(chat: dict, row: dict, *, phone: str, dc_id: int, document_row: dict | None, senders: dict):
    sender = senders.get(row["sender"])
    return types.Message(
        id=row["id"],
        peer_id=peer(chat),
        date=date(row["date"]),
        edit_date=date(row["edit_date"]) if row.get("edit_date") else None,
        message=row["text"],
        out=row["sender"] == phone,
        post=chat["type"] == CHANNEL,
        from_id=types.PeerUser(user_id=sender["user_id"]) if sender and chat["type"] != CHANNEL else None,
        reply_to=reply_header(chat, row["topic"], row.get("reply_to")),
        grouped_id=row.get("grouped_id"),
        entities=[entity_to_tl(MessageEntity(**e)) for e in json.loads(row.get("entities") or "[]")] or None,
        media=media(document_row, row["kind"], phone=phone, dc_id=dc_id, chat_id=chat["id"], message_id=row["id"]),
    )


def chat_created(chat: dict) -> types.MessageService:
    """The first message of every chat, so an empty chat still has a last message to show."""
    if chat["type"] == GROUP:
        action = types.MessageActionChatCreate(title=chat["title"], users=[])
    elif chat["type"] == USER:
        action = types.MessageActionEmpty()  # a private chat begins with nothing to announce
    else:
        action = types.MessageActionChannelCreate(title=chat["title"])
    return types.MessageService(id=1, peer_id=peer(chat), date=BASE_DATE, action=action)


def topic(chat: dict, row: dict) -> types.ForumTopic:
    return types.ForumTopic(
        id=row["id"],
        date=date(BASE_DATE.timestamp() + row["id"]),
        peer=peer(chat),
        title=row["title"],
        icon_color=0x6FB9F0,
        top_message=row["top_message_id"] or row["id"],
        read_inbox_max_id=0,
        read_outbox_max_id=0,
        unread_count=0,
        unread_mentions_count=0,
        unread_reactions_count=0,
        unread_poll_votes_count=0,
        from_id=types.PeerChannel(channel_id=chat["id"]),
        notify_settings=NOTIFY,
        closed=bool(row.get("closed")),
    )


def dialog(chat: dict, top_message: int) -> types.Dialog:
    return types.Dialog(
        peer=peer(chat),
        top_message=top_message,
        read_inbox_max_id=top_message,
        read_outbox_max_id=top_message,
        unread_count=0,
        unread_mentions_count=0,
        unread_reactions_count=0,
        unread_poll_votes_count=0,
        notify_settings=NOTIFY,
        pts=top_message if chat["type"] not in (GROUP, USER) else None,  # only channels count their own pts
    )


def state() -> types.updates.State:
    return types.updates.State(pts=1, qts=0, date=date(world.clock()), seq=0, unread_count=0)


def config(dc_id: int) -> types.Config:
    now = world.clock()
    return types.Config(
        date=date(now),
        expires=date(now + 3600),
        test_mode=False,
        this_dc=dc_id,
        dc_options=[types.DcOption(id=dc, ip_address=ip, port=DC_PORT) for dc, ip in DC_ADDRESSES.items()],
        dc_txt_domain_name="",
        chat_size_max=200,
        megagroup_size_max=200000,
        forwarded_count_max=100,
        online_update_period_ms=210000,
        offline_blur_timeout_ms=5000,
        offline_idle_timeout_ms=30000,
        online_cloud_timeout_ms=300000,
        notify_cloud_delay_ms=30000,
        notify_default_delay_ms=1500,
        push_chat_period_ms=60000,
        push_chat_limit=2,
        edit_time_limit=172800,
        revoke_time_limit=2147483647,
        revoke_pm_time_limit=2147483647,
        rating_e_decay=2419200,
        stickers_recent_limit=200,
        channels_read_media_period=604800,
        call_receive_timeout_ms=20000,
        call_ring_timeout_ms=90000,
        call_connect_timeout_ms=30000,
        call_packet_timeout_ms=10000,
        me_url_prefix="https://t.me/",
        caption_length_max=1024,
        message_length_max=4096,
        webfile_dc_id=4,
    )


def app_config(*, upload_parts: int, premium_upload_parts: int) -> types.help.AppConfig:
    """The client limits Telegram publishes: how many parts a file upload may have."""
    values = {"upload_max_fileparts_default": upload_parts, "upload_max_fileparts_premium": premium_upload_parts}
    return types.help.AppConfig(
        hash=1,
        config=types.JsonObject(
            value=[types.JsonObjectValue(key=key, value=types.JsonNumber(value=v)) for key, v in values.items()]
        ),
    )
