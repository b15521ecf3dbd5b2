"""Helpers shared by the sandbox tests."""

from telegram.records import ChatRef
from telegram.sandbox.world import chat_access_hash


def ref(phone: str, chat_id: int, type: str = "channel") -> ChatRef:
    """How `phone` addresses a sandbox chat: its id and the access hash the server gave that account."""
    return ChatRef(id=chat_id, access_hash=chat_access_hash(phone=phone, chat_id=chat_id, type=type), type=type)


async def search_all(gateway, chat: ChatRef, *, min_id: int = 0, topic_id: int | None = None) -> list[int]:
    """Every document message id above min_id, paging with next_offset_id as callers do; newest first."""
    ids, offset_id = [], 0
    while True:
        page = await gateway.search_documents(chat, min_id=min_id, offset_id=offset_id, topic_id=topic_id)
        ids += [message.id for message in page.messages]
        if page.next_offset_id is None:
            return ids
        offset_id = page.next_offset_id
