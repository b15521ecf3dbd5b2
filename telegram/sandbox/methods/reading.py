"""Reading: dialogs, full channels, last messages, forum topics, search and messages by id."""

import hashlib

from telethon.tl import functions, types

from telegram.records import GROUP, USER
from telegram.sandbox import tl
from telegram.sandbox.faults import RpcAnswer
from telegram.sandbox.methods.common import Call, chat, entities

NEAR_TOP = 100  # Telethon: min_id/max_id within the last 100 ids make Telegram's search answer nothing


def _message(call: Call, chat_row: dict, row: dict):
    document = call.world.document(row["document_id"]) if row["document_id"] is not None else None
    senders = {account["phone"]: account for account in call.world.accounts()}
    return tl.message(chat_row, row, phone=call.key["phone"], dc_id=call.dc_id, document_row=document, senders=senders)


def _top_message(call: Call, chat_row: dict):
    last_id = call.world.last_message_id(chat_row["id"])
    if not last_id:
        return tl.chat_created(chat_row)
    return _message(call, chat_row, call.world.message(chat_row["id"], last_id))


def get_dialogs(call: Call):
    request = call.request
    phone = call.me()["phone"]
    rows = call.world.account_chats(phone)
    tops = {row["id"]: _top_message(call, row) for row in rows}
    # Newest activity first, as Telegram lists dialogs; the offset is the last dialog of the previous page.
    rows.sort(key=lambda row: (tops[row["id"]].date, row["id"]), reverse=True)
    offset = tl_peer_id(request.offset_peer)
    if offset is not None:
        index = next((i for i, row in enumerate(rows) if row["id"] == offset), len(rows) - 1)
        rows = rows[index + 1 :]
    page = rows[: request.limit or 100]
    chats, users = entities(call, page)
    dialogs = [tl.dialog(row, tops[row["id"]].id) for row in page]
    messages = [tops[row["id"]] for row in page]
    if len(page) == len(rows) and offset is None:
        return types.messages.Dialogs(dialogs=dialogs, messages=messages, chats=chats, users=users)
    total = len(call.world.account_chats(phone))
    return types.messages.DialogsSlice(count=total, dialogs=dialogs, messages=messages, chats=chats, users=users)


def tl_peer_id(peer) -> int | None:
    if isinstance(peer, types.InputPeerChannel):
        return peer.channel_id
    if isinstance(peer, types.InputPeerChat):
        return peer.chat_id
    if isinstance(peer, types.InputPeerUser):
        return peer.user_id
    return None


def get_full_channel(call: Call):
    row, admin = chat(call, call.request.channel)
    full = types.ChannelFull(
        id=row["id"],
        about="",
        read_inbox_max_id=0,
        read_outbox_max_id=0,
        unread_count=0,
        chat_photo=types.PhotoEmpty(id=0),
        notify_settings=tl.NOTIFY,
        bot_info=[],
        pts=1,
        slowmode_seconds=row["slow_mode_seconds"] or None,
    )
    chats, users = entities(call, [row])
    return types.messages.ChatFull(full_chat=full, chats=chats, users=users)


def get_peer_dialogs(call: Call):
    # One chat the account cannot see fails the whole batch, as in Telegram.
    rows = [chat(call, dialog_peer.peer)[0] for dialog_peer in call.request.peers]
    tops = [_top_message(call, row) for row in rows]
    chats, users = entities(call, rows)
    return types.messages.PeerDialogs(
        dialogs=[tl.dialog(row, top.id) for row, top in zip(rows, tops, strict=True)],
        messages=tops,
        chats=chats,
        users=users,
        state=tl.state(),
    )


def get_forum_topics(call: Call):
    request = call.request
    row, _ = chat(call, request.peer)
    if not row["forum"]:
        raise RpcAnswer(400, "CHANNEL_FORUM_MISSING")
    topics = call.world.topics(row["id"], limit=None)
    # Telegram pages topics by their last activity, newest first, not by id.
    topics.sort(key=lambda topic: (topic["top_message_id"] or topic["id"], topic["id"]), reverse=True)
    if request.offset_topic:
        index = next((i for i, topic in enumerate(topics) if topic["id"] == request.offset_topic), len(topics) - 1)
        topics = topics[index + 1 :]
    page = topics[: request.limit or 100]
    messages = [
        _message(call, row, message)
        for message in (call.world.message(row["id"], topic["top_message_id"]) for topic in page)
        if message is not None
    ]
    chats, users = entities(call, [row])
    return types.messages.ForumTopics(
        count=len(topics),
        topics=[tl.topic(row, topic) for topic in page],
        messages=messages,
        chats=chats,
        users=users,
        pts=1,
    )


def _kind(filter_) -> str | None:
    if isinstance(filter_, types.InputMessagesFilterDocument):
        return "document"
    if isinstance(filter_, types.InputMessagesFilterPhotos):
        return "photo"
    return None


def _short(chat_id: int, offset_id: int, limit: int) -> int:
    """A deterministic short page length, as some channels answer mid-history."""
    digest = hashlib.sha256(f"{chat_id}:{offset_id}".encode()).digest()
    return 1 + digest[0] % max(1, limit)


def search(call: Call):
    request = call.request
    row, _ = chat(call, request.peer)
    world = call.world
    limit = min(request.limit or 100, 100)
    top = world.last_message_id(row["id"])
    topic = request.top_msg_id if row["forum"] else None
    if world.meta("search_min_id_near_top") and (
        (request.min_id and request.min_id >= top - NEAR_TOP) or (request.max_id and request.max_id >= top - NEAR_TOP)
    ):
        found, total = [], 0
    else:
        rows = world.search_messages(
            row["id"], kind=_kind(request.filter), topic=topic, below=request.offset_id or None
        )
        # A date range (min_date / max_date) narrows the search, as Telegram's does.
        if request.min_date or request.max_date:
            low = request.min_date.timestamp() if request.min_date else float("-inf")
            high = request.max_date.timestamp() if request.max_date else float("inf")
            rows = [message for message in rows if low <= message["date"] <= high]
        total = len(rows)
        rows = rows[max(request.add_offset, 0) :]
        if world.meta("short_search_pages"):
            limit = _short(row["id"], request.offset_id, limit)
        found = [
            message
            for message in rows[:limit]
            if message["id"] > request.min_id and (not request.max_id or message["id"] < request.max_id)
        ]
    chats, users = entities(call, [row], {message["sender"] for message in found})
    messages = [_message(call, row, message) for message in found]
    if row["type"] in (GROUP, USER):
        return types.messages.MessagesSlice(count=total, messages=messages, topics=[], chats=chats, users=users)
    return types.messages.ChannelMessages(pts=1, count=total, messages=messages, topics=[], chats=chats, users=users)


def _by_ids(call: Call, chat_row: dict, ids: list):
    found = []
    for item in ids:
        message_id = item.id if isinstance(item, types.InputMessageID) else 0
        message = call.world.message(chat_row["id"], message_id)
        if message is None:
            found.append(types.MessageEmpty(id=message_id, peer_id=tl.peer(chat_row)))
        else:
            found.append(_message(call, chat_row, message))
    return found


def get_channel_messages(call: Call):
    row, _ = chat(call, call.request.channel)
    messages = _by_ids(call, row, call.request.id)
    chats, users = entities(call, [row], {call.key["phone"]})
    return types.messages.ChannelMessages(
        pts=1, count=len(messages), messages=messages, topics=[], chats=chats, users=users
    )


def get_messages(call: Call):
    # Basic groups and private chats share the account's message box: every one of them answers for its ids.
    phone = call.me()["phone"]
    groups = [row for row in call.world.account_chats(phone) if row["type"] in (GROUP, USER)]
    ids = {item.id for item in call.request.id if isinstance(item, types.InputMessageID)}
    messages = [
        _message(call, group, message)
        for group in groups
        for message in (call.world.message(group["id"], message_id) for message_id in sorted(ids))
        if message is not None
    ]
    chats, users = entities(call, groups)
    return types.messages.Messages(messages=messages, topics=[], chats=chats, users=users)


def get_chats(call: Call):
    """messages.getChats: basic groups the account is in, an upgraded one naming its supergroup (migrated_to)."""
    rows = [chat(call, types.InputPeerChat(chat_id))[0] for chat_id in call.request.id]
    return types.messages.Chats(chats=entities(call, rows)[0])


def get_channels(call: Call):
    """channels.getChannels: by the account's own access hashes; CHANNEL_PRIVATE for one it is not in."""
    rows = [chat(call, channel)[0] for channel in call.request.id]
    return types.messages.Chats(chats=entities(call, rows)[0])


HANDLERS = {
    functions.messages.GetChatsRequest: get_chats,
    functions.channels.GetChannelsRequest: get_channels,
    functions.messages.GetDialogsRequest: get_dialogs,
    functions.channels.GetFullChannelRequest: get_full_channel,
    functions.messages.GetPeerDialogsRequest: get_peer_dialogs,
    functions.messages.GetForumTopicsRequest: get_forum_topics,
    functions.messages.SearchRequest: search,
    functions.channels.GetMessagesRequest: get_channel_messages,
    functions.messages.GetMessagesRequest: get_messages,
}
