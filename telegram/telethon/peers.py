"""The peers a request names, built from a stored chat ref (id, access_hash, type)."""

from telethon import types

from telegram.records import GENERAL_TOPIC_ID, GROUP, SELF, USER, ChatRef


def input_peer(chat: ChatRef) -> types.TypeInputPeer:
    if chat.type == SELF:
        return types.InputPeerSelf()
    if chat.type == GROUP:
        return types.InputPeerChat(chat_id=chat.id)
    if chat.type == USER:
        return types.InputPeerUser(user_id=chat.id, access_hash=chat.access_hash)
    return types.InputPeerChannel(channel_id=chat.id, access_hash=chat.access_hash)


def input_channel(chat: ChatRef | types.Channel) -> types.InputChannel:
    return types.InputChannel(channel_id=chat.id, access_hash=chat.access_hash or 0)


def reply_to(topic_id: int | None) -> types.InputReplyToMessage | None:
    # General (topic 1) takes no reply header, like any message of a chat without topics.
    if topic_id is None or topic_id == GENERAL_TOPIC_ID:
        return None
    return types.InputReplyToMessage(reply_to_msg_id=topic_id, top_msg_id=topic_id)
