"""Bots: auth.importBotAuthorization, their update state, private chats with people (inline keyboards, edits,
callback answers), and the updates the server pushes to a bot's live connection.

A logged-in bot is an account to the other methods (`bots.as_account`): it reads the channels it administers
(channels.getChannels also by access hash 0, as Telegram lets bots) and sends their documents on by
InputDocument, which it may only when its file reference comes from a message the bot can see.
"""

import json

from telethon.tl import functions, types

from telegram.records import CHANNEL, USER
from telegram.sandbox import bots, tl, world
from telegram.sandbox.faults import RpcAnswer
from telegram.sandbox.methods import writing
from telegram.sandbox.methods.common import Call, chat, peer_chat_id, reference_fresh

CHAT_INSTANCE = 1  # Telegram's id of "this chat"; one private chat per person and bot


def bot_user(row: dict, *, is_self: bool, phone: str) -> types.User:
    return types.User(
        id=row["id"],
        is_self=is_self,
        bot=True,
        bot_info_version=1,
        access_hash=tl.access_hash("user", phone),
        first_name=row["name"],
        username=row["username"],
    )


def _is_bot(call: Call) -> bool:
    return call.key["state"] == "authorized" and bots.bot_id_of(call.key["phone"]) is not None


def _me(call: Call) -> dict:
    call.me()  # revoked keys answer as for accounts
    if not _is_bot(call):
        raise RpcAnswer(400, "METHOD_NOT_SUPPORTED_BY_SANDBOX")
    return bots.bot(call.world, bot_id=bots.bot_id_of(call.key["phone"]))


def import_bot_authorization(call: Call):
    row = bots.bot(call.world, token=call.request.bot_auth_token)
    if row is None:
        raise RpcAnswer(400, "ACCESS_TOKEN_INVALID")
    phone = bots.bot_phone(row["id"])
    bots.session_open(call.world, key_id=call.key["key_id"], bot_id=row["id"])
    call.world.key_update(call.key["key_id"], phone=phone, state="authorized", srp_b=None)
    return types.auth.Authorization(user=bot_user(row, is_self=True, phone=phone))


def _buttons(markup) -> list[list[dict]] | None:
    """An inline keyboard as the world keeps it; Telegram's errors for what a bot may not attach."""
    if markup is None:
        return None
    if not isinstance(markup, types.ReplyInlineMarkup):
        raise RpcAnswer(400, "REPLY_MARKUP_INVALID")
    rows = []
    for line in markup.rows:
        row = []
        for button in line.buttons:
            kind = getattr(button, "type", None)
            if isinstance(kind, types.InlineButtonTypeCallback):
                if len(kind.data) > 64:
                    raise RpcAnswer(400, "BUTTON_DATA_INVALID")
                row.append({"text": button.text, "data": kind.data.hex()})
            elif isinstance(kind, types.InlineButtonTypeUrl):
                row.append({"text": button.text, "url": kind.url})
            else:
                raise RpcAnswer(400, "BUTTON_TYPE_INVALID")
        rows.append(row)
    return rows


def _markup(buttons: str | None) -> types.ReplyInlineMarkup | None:
    rows = json.loads(buttons or "[]")
    if not rows:
        return None
    return types.ReplyInlineMarkup(
        rows=[
            types.KeyboardInlineButtonRow(
                buttons=[
                    types.KeyboardInlineButton(
                        text=b["text"],
                        type=types.InlineButtonTypeCallback(data=bytes.fromhex(b["data"]))
                        if "data" in b
                        else types.InlineButtonTypeUrl(url=b["url"]),
                    )
                    for b in line
                ]
            )
            for line in rows
        ]
    )


def message(world_: world.World, bot_row: dict, row: dict, *, dc_id: int) -> types.Message:
    """A message of a person's private chat with the bot, as the bot sees it."""
    phone = bots.bot_phone(bot_row["id"])
    document = world_.document(row["document_id"]) if row["document_id"] is not None else None
    return types.Message(
        id=row["id"],
        peer_id=types.PeerUser(user_id=row["user_id"]),
        date=tl.date(row["date"]),
        message=row["text"],
        out=bool(row["from_bot"]),
        from_id=types.PeerUser(user_id=bot_row["id"]) if row["from_bot"] else None,
        reply_markup=_markup(row["buttons"]),
        media=tl.media(document, row["kind"], phone=phone, dc_id=dc_id),
    )


def _users(world_: world.World, bot_row: dict, user_ids) -> list[types.User]:
    phone = bots.bot_phone(bot_row["id"])
    people = [tl.person(world_.chat(user_id), phone=phone) for user_id in sorted(set(user_ids))]
    return [bot_user(bot_row, is_self=True, phone=phone), *people]


def _person(call: Call, peer) -> int:
    """The person a bot's send names: by the access hash the bot was given with their messages."""
    user_id = peer_chat_id(peer)
    row = call.world.chat(user_id) if user_id else None
    if (
        not isinstance(peer, types.InputPeerUser)
        or row is None
        or row["type"] != USER
        or peer.access_hash != tl.access_hash("user", call.key["phone"], user_id)
    ):
        raise RpcAnswer(400, "PEER_ID_INVALID")
    return user_id


def _document(call: Call, media) -> tuple[str, int]:
    """A document a bot sends on (one of a message it can see: its file reference says which), or its upload."""
    if isinstance(media, types.InputMediaUploadedPhoto | types.InputMediaUploadedDocument):
        return writing._media_document(call, media)
    if not isinstance(media, types.InputMediaDocument | types.InputMediaPhoto):
        raise RpcAnswer(400, "MEDIA_INVALID")
    kind, document_id = writing._media_document(call, media)
    chat_id, message_id = reference_fresh(call, media.id.file_reference)
    source = call.world.message(chat_id, message_id) if chat_id else None
    if (
        source is None
        or source["document_id"] != document_id
        or call.world.membership(chat_id, call.key["phone"]) is None
    ):
        raise RpcAnswer(400, "MEDIA_INVALID")
    return kind, document_id


def _sent(call: Call, bot_row: dict, message_id: int, pts: int, random_id: int | None, *, edit: bool = False):
    row = bots.message(call.world, bot_row["id"], message_id)
    new = message(call.world, bot_row, row, dc_id=call.dc_id)
    update = (
        types.UpdateEditMessage(message=new, pts=pts, pts_count=1)
        if edit
        else types.UpdateNewMessage(message=new, pts=pts, pts_count=1)
    )
    updates = [update] if random_id is None else [types.UpdateMessageID(id=message_id, random_id=random_id), update]
    return types.Updates(
        updates=updates,
        users=_users(call.world, bot_row, [row["user_id"]]),
        chats=[],
        date=tl.date(world.clock()),
        seq=0,
    )


def _send(call: Call, *, text: str, media=None):
    request = call.request
    bot_row = _me(call)
    user_id = _person(call, request.peer)
    if not text and media is None:
        raise RpcAnswer(400, "MESSAGE_EMPTY")
    writing._entities(call.me(), text=text, caption=media is not None, entities=None)
    kind, document_id = _document(call, media) if media is not None else (None, None)
    try:
        message_id, pts = bots.bot_sends(
            call.world,
            bot_id=bot_row["id"],
            user_id=user_id,
            text=text,
            buttons=_buttons(request.reply_markup),
            kind=kind,
            document_id=document_id,
        )
    except bots.NotStarted:
        # Telegram: a bot cannot start a conversation; it knows only people who wrote to it.
        raise RpcAnswer(400, "PEER_ID_INVALID") from None
    return _sent(call, bot_row, message_id, pts, request.random_id)


def send_message(call: Call):
    return _send(call, text=call.request.message)


def send_media(call: Call):
    return _send(call, text=call.request.message, media=call.request.media)


def edit_message(call: Call):
    request = call.request
    bot_row = _me(call)
    user_id = _person(call, request.peer)
    row = bots.message(call.world, bot_row["id"], request.id)
    if row is None or row["user_id"] != user_id or not row["from_bot"]:
        raise RpcAnswer(400, "MESSAGE_ID_INVALID")
    text = row["text"] if request.message is None else request.message
    buttons = _buttons(request.reply_markup)
    if text == row["text"] and json.dumps(buttons) == (row["buttons"] or "null"):
        raise RpcAnswer(400, "MESSAGE_NOT_MODIFIED")
    pts = bots.bot_edits(call.world, bot_id=bot_row["id"], message_id=row["id"], text=text, buttons=buttons)
    return _sent(call, bot_row, row["id"], pts, None, edit=True)


def set_bot_callback_answer(call: Call):
    bot_row = _me(call)
    query = bots.callback(call.world, call.request.query_id)
    if query is None or query["bot_id"] != bot_row["id"]:
        raise RpcAnswer(400, "QUERY_ID_INVALID")
    bots.callback_answer(call.world, query_id=query["query_id"], text=call.request.message or "")
    return True


def get_users(call: Call):
    bot_row = _me(call)
    phone = call.key["phone"]
    found = []
    for user in call.request.id:
        person = call.world.chat(user.user_id) if isinstance(user, types.InputUser) else None
        if isinstance(user, types.InputUserSelf):
            found.append(bot_user(bot_row, is_self=True, phone=phone))
        elif person is not None and person["type"] == USER and bots.started(call.world, bot_row["id"], person["id"]):
            found.append(tl.person(person, phone=phone))
        else:
            found.append(types.UserEmpty(id=0))
    return found


def _state(call: Call, bot_row: dict) -> types.updates.State:
    return types.updates.State(
        pts=bots.pts(call.world, bot_row["id"]), qts=0, date=tl.date(world.clock()), seq=0, unread_count=0
    )


def get_state(call: Call):
    return _state(call, _me(call))


def get_difference(call: Call):
    bot_row = _me(call)
    rows = bots.difference(call.world, bot_row["id"], after_pts=call.request.pts)
    if not rows:
        return types.updates.DifferenceEmpty(date=tl.date(world.clock()), seq=0)
    new, edited = [], []
    for row in rows:
        row_message = bots.message(call.world, bot_row["id"], row["message_id"])
        item = message(call.world, bot_row, row_message, dc_id=call.dc_id)
        if row["kind"] == "new":
            new.append(item)
        else:
            edited.append(types.UpdateEditMessage(message=item, pts=row["pts"], pts_count=1))
    return types.updates.Difference(
        new_messages=new,
        new_encrypted_messages=[],
        other_updates=edited,
        chats=[],
        users=_users(call.world, bot_row, [row["user_id"] for row in rows]),
        state=_state(call, bot_row),
    )


def get_channels(call: Call):
    """channels.getChannels: a bot may name a channel it is in by access hash 0 (Telethon does, lacking one)."""
    phone = call.key["phone"]
    channels = [
        types.InputChannel(channel.channel_id, tl.access_hash("chat", phone, channel.channel_id))
        if isinstance(channel, types.InputChannel) and channel.access_hash == 0
        else channel
        for channel in call.request.id
    ]
    rows = [chat(call, channel)[0] for channel in channels]
    return types.messages.Chats(chats=[tl.chat_entity(row, phone=phone, admin=True) for row in rows])


def get_participant(call: Call):
    """channels.getParticipant for a bot: is this person in a channel or supergroup the bot is in? As Telegram:
    CHANNEL_PRIVATE where the bot is not in, CHAT_ADMIN_REQUIRED in a broadcast channel the bot does not
    administer (only admins see its members), USER_NOT_PARTICIPANT for someone not (or no longer) in it."""
    _me(call)
    row, admin = chat(call, call.request.channel)
    if row["type"] == CHANNEL and not admin:
        raise RpcAnswer(403, "CHAT_ADMIN_REQUIRED")
    peer = call.request.participant
    user_id = peer_chat_id(peer)
    person = call.world.chat(user_id) if user_id else None
    if (
        not isinstance(peer, types.InputPeerUser)
        or person is None
        or person["type"] != USER
        or peer.access_hash != tl.access_hash("user", call.key["phone"], user_id)
    ):
        raise RpcAnswer(400, "PARTICIPANT_ID_INVALID")
    joined = bots.person_in(call.world, row["id"], user_id)
    if joined is None:
        raise RpcAnswer(400, "USER_NOT_PARTICIPANT")
    phone = call.key["phone"]
    return types.channels.ChannelParticipant(
        participant=types.ChannelParticipant(user_id=user_id, date=tl.date(joined["date"])),
        chats=[tl.chat_entity(row, phone=phone, admin=admin)],
        users=[tl.person(person, phone=phone)],
    )


def pushes_start(world_: world.World, key_id: str) -> int | None:
    """Where a new connection's pushes begin: for a key already logged in as a bot, what people do from now on
    (what they did while it was away comes from updates.getDifference, as on Telegram); None for any other key
    (a bot's login starts its pushes)."""
    key = world_.key(key_id)
    session = bots.session(world_, key_id) if key and key["state"] == "authorized" else None
    return None if session is None else bots.last_seq(world_, session["bot_id"])


def updates_pushed(world_: world.World, key_id: str, *, after_seq: int | None, dc_id: int) -> tuple[list, int | None]:
    """What the server pushes to a bot's connection: an Updates per thing a person did since `after_seq` (None:
    since the key logged in), and the seq to ask from next time. Nothing for a key that is no logged-in bot."""
    key = world_.key(key_id)
    session = bots.session(world_, key_id) if key and key["state"] == "authorized" else None
    if session is None:
        return [], after_seq
    bot_id = session["bot_id"]
    after_seq = session["after_seq"] if after_seq is None else after_seq
    bot_row = bots.bot(world_, bot_id=bot_id)
    found = []
    for row in bots.pushes(world_, bot_id, after_seq=after_seq):
        if row["kind"] == "callback":
            update = types.UpdateBotCallbackQuery(
                query_id=row["query_id"],
                user_id=row["user_id"],
                peer=types.PeerUser(user_id=row["user_id"]),
                msg_id=row["message_id"],
                chat_instance=CHAT_INSTANCE,
                data=row["data"],
            )
        else:
            item = message(world_, bot_row, bots.message(world_, bot_id, row["message_id"]), dc_id=dc_id)
            update = types.UpdateNewMessage(message=item, pts=row["pts"], pts_count=1)
        users = _users(world_, bot_row, [row["user_id"]])
        found.append(types.Updates(updates=[update], users=users, chats=[], date=tl.date(world.clock()), seq=0))
        after_seq = row["seq"]
    return found, after_seq


def _for_bots(bot_handler, account_handler):
    def handle(call: Call):
        if _is_bot(call):
            return bot_handler(call)
        if account_handler is None:
            raise RpcAnswer(400, "METHOD_NOT_SUPPORTED_BY_SANDBOX")
        return account_handler(call)

    return handle


# What a logged-in bot is answered apart from accounts, by request class.
BOT_HANDLERS = {
    functions.auth.ImportBotAuthorizationRequest: import_bot_authorization,
    functions.messages.SetBotCallbackAnswerRequest: set_bot_callback_answer,
    functions.messages.EditMessageRequest: edit_message,
    functions.users.GetUsersRequest: get_users,
    functions.updates.GetStateRequest: get_state,
    functions.updates.GetDifferenceRequest: get_difference,
    functions.channels.GetChannelsRequest: get_channels,
    functions.channels.GetParticipantRequest: get_participant,
    functions.messages.SendMessageRequest: send_message,
    functions.messages.SendMediaRequest: send_media,
}


def handlers(account_handlers: dict) -> dict:
    """The bots' methods over the accounts' (`account_handlers`): a bot's key gets the bot's answer, an account's
    the account's, for each method both have."""
    return {
        request: handler
        if request is functions.auth.ImportBotAuthorizationRequest
        else _for_bots(handler, account_handlers.get(request))
        for request, handler in BOT_HANDLERS.items()
    }
