"""Joining and creating: contacts.resolveUsername, messages.checkChatInvite / importChatInvite,
channels.joinChannel / leaveChannel, messages.deleteChatUser, channels.createChannel, contacts.resolvePhone,
channels.inviteToChannel and channels.editAdmin, with Telegram's answers for each refusal. Memberships they
make are the world's: later reads see them."""

from telethon.tl import functions, types

from telegram.records import CHANNEL, GROUP, SUPERGROUP, USER
from telegram.sandbox import bots, tl, world
from telegram.sandbox.faults import RpcAnswer
from telegram.sandbox.methods.bots import bot_user
from telegram.sandbox.methods.common import Call, chat, entities


def _entity(call: Call, row: dict):
    phone = call.key["phone"]
    membership = call.world.membership(row["id"], phone)
    return tl.chat_entity(
        row,
        phone=phone,
        admin=membership == "admin",
        left=membership is None,
        members_count=call.world.members_count(row["id"]),
    )


def _updates(call: Call, row: dict) -> types.Updates:
    """What Telegram answers a join, a leave or a create with: the chat as it now is."""
    return types.Updates(updates=[], users=[], chats=[_entity(call, row)], date=tl.date(world.clock()), seq=0)


def _room_for_one_more(call: Call, phone: str, *, error: str = "CHANNELS_TOO_MUCH") -> None:
    account = call.world.account(phone) or bots.as_account(call.world, phone)
    limit = call.world.meta("channels_max") * (2 if account["premium"] else 1)
    if call.world.channels_joined(phone) >= limit:
        raise RpcAnswer(400, error)


def resolve_username(call: Call):
    call.me()
    username = call.request.username.lstrip("@")
    if not username:
        raise RpcAnswer(400, "USERNAME_INVALID")
    row = call.world.chat_by_username(username)
    if row is not None and row["type"] != USER:
        return types.contacts.ResolvedPeer(peer=tl.peer(row), chats=[_entity(call, row)], users=[])
    if row is not None:
        return types.contacts.ResolvedPeer(peer=tl.peer(row), chats=[], users=[tl.person(row, phone=call.key["phone"])])
    account = next((a for a in call.world.accounts() if a["username"].lower() == username.lower()), None)
    bot = bots.bot(call.world, username=username) if account is None else None
    if bot is not None:
        user = bot_user(bot, is_self=False, phone=bots.bot_phone(bot["id"]))
        return types.contacts.ResolvedPeer(peer=types.PeerUser(user_id=bot["id"]), chats=[], users=[user])
    if account is None:
        raise RpcAnswer(400, "USERNAME_NOT_OCCUPIED")
    user = tl.user(account, is_self=account["phone"] == call.key["phone"])
    return types.contacts.ResolvedPeer(peer=types.PeerUser(user_id=account["user_id"]), chats=[], users=[user])


def _public_channel(call: Call, input_channel) -> dict:
    """A channel named by the access hash the account got for it (from resolveUsername, or as a member)."""
    phone = call.me()["phone"]
    row = call.world.chat(getattr(input_channel, "channel_id", 0))
    if (
        row is None
        or row["type"] not in (CHANNEL, SUPERGROUP)
        or input_channel.access_hash != tl.access_hash("chat", phone, row["id"])
    ):
        raise RpcAnswer(400, "CHANNEL_INVALID")
    return row


def join_channel(call: Call):
    phone = call.me()["phone"]
    row = _public_channel(call, call.request.channel)
    if call.world.membership(row["id"], phone) is not None:
        return _updates(call, row)  # Telegram answers a member's join with the chat, unchanged
    if not row["username"]:
        raise RpcAnswer(400, "CHANNEL_PRIVATE")  # a private chat is joined by an invite only
    return _join(call, row, request_needed=bool(row["join_request"]))


def _join(call: Call, row: dict, *, request_needed: bool):
    phone = call.key["phone"]
    if row["type"] != GROUP:
        _room_for_one_more(call, phone)
    if request_needed:
        call.world.join_request_add(row["id"], phone)
        raise RpcAnswer(400, "INVITE_REQUEST_SENT")
    call.world.member_set(row["id"], phone)
    return _updates(call, row)


def _invite(call: Call) -> tuple[dict, dict]:
    call.me()
    invite = call.world.invite(call.request.hash)
    if invite is None:
        raise RpcAnswer(400, "INVITE_HASH_INVALID" if call.request.hash else "INVITE_HASH_EMPTY")
    if invite["state"] != "valid":  # Telegram answers alike for an expired and a revoked link
        raise RpcAnswer(400, "INVITE_HASH_EXPIRED")
    return invite, call.world.chat(invite["chat_id"])


def check_chat_invite(call: Call):
    invite, row = _invite(call)
    if call.world.membership(row["id"], call.key["phone"]) is not None:
        return types.ChatInviteAlready(chat=_entity(call, row))
    return types.ChatInvite(
        title=row["title"],
        photo=types.PhotoEmpty(id=0),
        participants_count=call.world.members_count(row["id"]),
        color=0,
        channel=row["type"] != GROUP,
        broadcast=row["type"] == CHANNEL,
        megagroup=row["type"] == SUPERGROUP,
        public=bool(row["username"]),
        request_needed=bool(invite["request_needed"]),
    )


def import_chat_invite(call: Call):
    invite, row = _invite(call)
    if call.world.membership(row["id"], call.key["phone"]) is not None:
        raise RpcAnswer(400, "USER_ALREADY_PARTICIPANT")
    return _join(call, row, request_needed=bool(invite["request_needed"]))


def leave_channel(call: Call):
    phone = call.me()["phone"]
    row = _public_channel(call, call.request.channel)
    if call.world.membership(row["id"], phone) is None:
        raise RpcAnswer(400, "USER_NOT_PARTICIPANT" if row["username"] else "CHANNEL_PRIVATE")
    call.world.member_set(row["id"], phone, member=False)
    return _updates(call, row)


def delete_chat_user(call: Call):
    """messages.deleteChatUser with the account itself: leaving a basic group."""
    row, _ = chat(call, types.InputPeerChat(chat_id=call.request.chat_id))
    if not isinstance(call.request.user_id, types.InputUserSelf):
        raise RpcAnswer(400, "CHAT_ADMIN_REQUIRED")  # removing others: not something this project does
    call.world.member_set(row["id"], call.key["phone"], member=False)
    return _updates(call, row)


def create_channel(call: Call):
    request = call.request
    phone = call.me()["phone"]
    title = (request.title or "").strip()
    if not title:
        raise RpcAnswer(400, "CHAT_TITLE_EMPTY")
    if len(request.about or "") > 255:
        raise RpcAnswer(400, "CHAT_ABOUT_TOO_LONG")
    _room_for_one_more(call, phone)
    chat_type = SUPERGROUP if request.megagroup or request.forum else CHANNEL
    chat_id = call.world.channel_create(title=title[:128], creator=phone, type=chat_type, forum=bool(request.forum))
    return _updates(call, call.world.chat(chat_id))


def resolve_phone(call: Call):
    call.me()
    digits = call.request.phone.lstrip("+")
    account = call.world.account(f"+{digits}")
    if account is None:
        raise RpcAnswer(400, "PHONE_NOT_OCCUPIED")
    user = tl.user(account, is_self=account["phone"] == call.key["phone"])
    return types.contacts.ResolvedPeer(peer=types.PeerUser(user_id=account["user_id"]), chats=[], users=[user])


def _account_of(call: Call, input_user) -> dict:
    """A world account (or bot) named by its user id and the access hash Telegram gave for it."""
    user_id = getattr(input_user, "user_id", 0)
    account = next((a for a in call.world.accounts() if a["user_id"] == user_id), None)
    account = account or bots.as_account(call.world, bots.bot_phone(user_id))
    if account is None or input_user.access_hash != tl.access_hash("user", account["phone"]):
        raise RpcAnswer(400, "USER_ID_INVALID")
    return account


def _administered(call: Call, input_channel) -> dict:
    row, admin = chat(call, input_channel)
    if not admin:
        raise RpcAnswer(400, "CHAT_ADMIN_REQUIRED")
    return row


def invite_to_channel(call: Call):
    row = _administered(call, call.request.channel)
    refused = set(call.world.meta("invites_refused_by") or ())
    missing = []
    for input_user in call.request.users:
        account = _account_of(call, input_user)
        if call.world.membership(row["id"], account["phone"]) is not None:
            continue
        if account["phone"] in refused:  # its privacy settings let nobody add it
            missing.append(types.MissingInvitee(user_id=account["user_id"]))
            continue
        _room_for_one_more(call, account["phone"], error="USER_CHANNELS_TOO_MUCH")
        call.world.member_set(row["id"], account["phone"])
    return types.messages.InvitedUsers(updates=_updates(call, row), missing_invitees=missing)


def edit_admin(call: Call):
    request = call.request
    row = _administered(call, request.channel)
    account = _account_of(call, request.user_id)
    if account["phone"] == call.key["phone"]:
        raise RpcAnswer(400, "USER_CREATOR")
    if call.world.membership(row["id"], account["phone"]) is None:
        # Telegram adds a promoted user to a channel, unless its privacy settings refuse
        if account["phone"] in set(call.world.meta("invites_refused_by") or ()):
            raise RpcAnswer(403, "USER_PRIVACY_RESTRICTED")
        _room_for_one_more(call, account["phone"], error="USER_CHANNELS_TOO_MUCH")
    rights = request.admin_rights
    call.world.member_set(row["id"], account["phone"], admin=bool(rights and rights.post_messages))
    chats, users = entities(call, [row])
    return types.Updates(updates=[], users=users, chats=chats, date=tl.date(world.clock()), seq=0)


HANDLERS = {
    functions.contacts.ResolveUsernameRequest: resolve_username,
    functions.channels.JoinChannelRequest: join_channel,
    functions.messages.CheckChatInviteRequest: check_chat_invite,
    functions.messages.ImportChatInviteRequest: import_chat_invite,
    functions.channels.LeaveChannelRequest: leave_channel,
    functions.messages.DeleteChatUserRequest: delete_chat_user,
    functions.channels.CreateChannelRequest: create_channel,
    functions.contacts.ResolvePhoneRequest: resolve_phone,
    functions.channels.InviteToChannelRequest: invite_to_channel,
    functions.channels.EditAdminRequest: edit_admin,
}
