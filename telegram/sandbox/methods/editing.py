"""Editing: messages.editMessage, with Telegram's rules for whose messages may be edited, and until when."""

import json

from telethon.tl import functions, types

from telegram.records import CHANNEL, GROUP, USER
from telegram.sandbox import tl, world
from telegram.sandbox.faults import RpcAnswer
from telegram.sandbox.methods.common import Call, chat, entities
from telegram.sandbox.methods.writing import _entities, _media_document

# Telegram's edit_time_limit (help.getConfig): outside channels, a message may be edited for 48 hours.
EDIT_TIME_LIMIT_SECONDS = 172_800


def edit_message(call: Call):
    """messages.editMessage: the account's own message, its text (and entities) and/or its media. The same
    content again is MESSAGE_NOT_MODIFIED; a message gone is MESSAGE_ID_INVALID; another's message is
    MESSAGE_AUTHOR_REQUIRED; in a group (not a channel) after 48 hours, MESSAGE_EDIT_TIME_EXPIRED."""
    request = call.request
    me = call.me()
    chat_row, _ = chat(call, request.peer)
    row = call.world.message(chat_row["id"], request.id)
    if row is None:
        raise RpcAnswer(400, "MESSAGE_ID_INVALID")
    if row["sender"] != me["phone"]:
        raise RpcAnswer(403, "MESSAGE_AUTHOR_REQUIRED")
    now = world.clock()
    if chat_row["type"] != CHANNEL and now - row["date"] > EDIT_TIME_LIMIT_SECONDS:
        raise RpcAnswer(400, "MESSAGE_EDIT_TIME_EXPIRED")
    kind, document_id = row["kind"], row["document_id"]
    if request.media is not None:
        kind, document_id = _media_document(call, request.media)
    text = row["text"] if request.message is None else request.message
    if request.message is None:
        edited_entities = json.loads(row["entities"] or "[]")
    else:
        edited_entities = _entities(me, text=text, caption=kind is not None, entities=request.entities)
    no_webpage = bool(request.no_webpage)
    before = (
        row["text"],
        json.loads(row["entities"] or "[]"),
        row["kind"],
        row["document_id"],
        bool(row["no_webpage"]),
    )
    if (text, edited_entities, kind, document_id, no_webpage) == before:
        raise RpcAnswer(400, "MESSAGE_NOT_MODIFIED")
    with call.world.transaction() as conn:
        conn.execute(
            "UPDATE messages SET text = ?, entities = ?, kind = ?, document_id = ?, no_webpage = ?, edit_date = ?"
            " WHERE chat_id = ? AND id = ?",
            (
                text,
                json.dumps(edited_entities) if edited_entities else None,
                kind,
                document_id,
                int(no_webpage),
                now,
                chat_row["id"],
                row["id"],
            ),
        )
    row = call.world.message(chat_row["id"], row["id"])
    document = call.world.document(document_id) if document_id is not None else None
    message = tl.message(
        chat_row, row, phone=me["phone"], dc_id=call.dc_id, document_row=document, senders={me["phone"]: me}
    )
    update = (
        types.UpdateEditMessage(message=message, pts=row["id"], pts_count=1)
        if chat_row["type"] in (GROUP, USER)
        else types.UpdateEditChannelMessage(message=message, pts=row["id"], pts_count=1)
    )
    chats, users = entities(call, [chat_row])
    return types.Updates(updates=[update], users=users, chats=chats, date=tl.date(now), seq=0)


HANDLERS = {functions.messages.EditMessageRequest: edit_message}
