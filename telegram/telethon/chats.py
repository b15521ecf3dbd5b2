"""The account's chats: listed, followed when a group became a supergroup, previewed, joined, left and created,
and other accounts or a bot made admins who post in a channel."""

from telethon import errors, functions, types, utils

from telegram.errors import NotFound, TargetForbidden
from telegram.records import (
    ALREADY_MEMBER,
    CHANNEL,
    GROUP,
    JOINED,
    REQUESTED,
    SUPERGROUP,
    USER,
    ChatInfo,
    ChatLink,
    ChatPreview,
    ChatRef,
    JoinResult,
)
from telegram.telethon.errors import OPERATOR_WORDS, maps_errors
from telegram.telethon.peers import input_channel

SERVICE_NOTIFICATIONS_USER_ID = 777000  # "Telegram", who sends login codes: in every account's dialogs, no person


class ChatCalls:
    @maps_errors
    async def list_chats(self) -> list[ChatInfo]:
        chats = []
        async for dialog in self._client.iter_dialogs(ignore_migrated=True):
            entity = dialog.entity
            if isinstance(entity, types.Channel):
                chats.append(await self._channel_info(entity))
            elif isinstance(entity, types.Chat) and not entity.deactivated:
                chats.append(_group_info(entity))
            elif isinstance(entity, types.User) and _a_person(entity):
                chats.append(
                    ChatInfo(
                        id=entity.id,
                        access_hash=entity.access_hash or 0,
                        title=" ".join(part for part in (entity.first_name, entity.last_name) if part)
                        or f"User {entity.id}",
                        type=USER,
                        can_post=True,
                        username=entity.username or "",
                    )
                )
        return chats

    @maps_errors
    async def chat_migrated_to(self, chat: ChatRef) -> ChatInfo | None:
        if chat.type != GROUP:
            return None
        result = await self._client(functions.messages.GetChatsRequest(id=[chat.id]))
        group = next((entity for entity in result.chats if entity.id == chat.id), None)
        migrated_to = getattr(group, "migrated_to", None)
        if not isinstance(migrated_to, types.InputChannel):
            return None
        result = await self._client(functions.channels.GetChannelsRequest(id=[migrated_to]))
        channel = next((entity for entity in result.chats if entity.id == migrated_to.channel_id), None)
        if not isinstance(channel, types.Channel):  # ChannelForbidden: the account is not in it
            raise TargetForbidden(OPERATOR_WORDS["CHANNEL_PRIVATE"], rpc="CHANNEL_PRIVATE")
        return await self._channel_info(channel)

    async def _channel_info(self, channel: types.Channel) -> ChatInfo:
        admin = bool(channel.creator or channel.admin_rights)
        if channel.broadcast:
            can_post = bool(channel.creator or (channel.admin_rights and channel.admin_rights.post_messages))
        else:
            can_post = admin or not (_banned(channel.banned_rights) or _banned(channel.default_banned_rights))
        slow_mode_seconds = 0
        if channel.slowmode_enabled and not admin:  # admins are exempt; the seconds live only in the full chat
            full = await self._client(functions.channels.GetFullChannelRequest(input_channel(channel)))
            slow_mode_seconds = full.full_chat.slowmode_seconds or 0
        return ChatInfo(
            id=channel.id,
            access_hash=channel.access_hash or 0,
            title=channel.title,
            type=CHANNEL if channel.broadcast else SUPERGROUP,
            forum=bool(channel.forum),
            slow_mode_seconds=slow_mode_seconds,
            members_count=channel.participants_count,
            can_post=can_post,
            username=channel.username or "",
        )

    # Joining and creating

    @maps_errors
    async def preview_chat(self, link: ChatLink) -> ChatPreview:
        if link.username:
            channel = await self._resolve_channel(link.username)
            return _entity_preview(channel, already_member=not channel.left)
        invite = await self._client(functions.messages.CheckChatInviteRequest(link.invite_hash))
        if isinstance(invite, types.ChatInviteAlready | types.ChatInvitePeek):
            return _entity_preview(invite.chat, already_member=isinstance(invite, types.ChatInviteAlready))
        return ChatPreview(
            title=invite.title,
            type=CHANNEL if invite.broadcast else SUPERGROUP if invite.channel or invite.megagroup else GROUP,
            members_count=invite.participants_count,
            forum=None,  # Telegram's invite does not say before joining
            already_member=False,
            request_needed=bool(invite.request_needed),
        )

    @maps_errors
    async def join_chat(self, link: ChatLink) -> JoinResult:
        try:
            if link.username:
                channel = await self._resolve_channel(link.username)
                if not channel.left:
                    return JoinResult(status=ALREADY_MEMBER, chat=await self._chat_info(channel))
                updates = await self._client(functions.channels.JoinChannelRequest(input_channel(channel)))
                joined = _updates_chat(updates, channel.id) or channel
            else:
                updates = await self._client(functions.messages.ImportChatInviteRequest(link.invite_hash))
                joined = _updates_chat(updates)
        except errors.InviteRequestSentError:
            return JoinResult(status=REQUESTED, chat=None)
        except errors.UserAlreadyParticipantError:
            invite = await self._client(functions.messages.CheckChatInviteRequest(link.invite_hash))
            return JoinResult(status=ALREADY_MEMBER, chat=await self._chat_info(invite.chat))
        if joined is None:
            raise NotFound("Telegram joined the chat but did not name it; refresh this account's chats.")
        return JoinResult(status=JOINED, chat=await self._chat_info(joined))

    async def _resolve_channel(self, username: str) -> types.Channel:
        resolved = await self._client(functions.contacts.ResolveUsernameRequest(username))
        if not isinstance(resolved.peer, types.PeerChannel):
            raise NotFound(f"@{username} is a person or a bot, not a channel or group.", rpc="USERNAME_NOT_CHAT")
        wanted = resolved.peer.channel_id
        channel = next((chat for chat in resolved.chats if isinstance(chat, types.Channel) and chat.id == wanted), None)
        if channel is None:  # ChannelForbidden: banned from it
            raise TargetForbidden(OPERATOR_WORDS["CHANNEL_PRIVATE"], rpc="CHANNEL_PRIVATE")
        return channel

    async def _chat_info(self, entity: types.Channel | types.Chat) -> ChatInfo:
        if isinstance(entity, types.Chat):
            return _group_info(entity)
        return await self._channel_info(entity)

    @maps_errors
    async def leave_chat(self, chat: ChatRef) -> bool:
        """Leave a channel or group; False when the account was not in it (nothing to do)."""
        try:
            if chat.type == GROUP:
                await self._client(functions.messages.DeleteChatUserRequest(chat.id, types.InputUserSelf()))
            else:
                await self._client(functions.channels.LeaveChannelRequest(input_channel(chat)))
        except (errors.UserNotParticipantError, errors.ChannelPrivateError):
            return False
        return True

    @maps_errors
    async def create_channel(self, *, title: str, about: str = "") -> ChatInfo:
        updates = await self._client(functions.channels.CreateChannelRequest(title=title, about=about, broadcast=True))
        channel = _updates_chat(updates)
        if channel is None:
            raise NotFound("Telegram created the channel but did not name it; refresh this account's chats.")
        return await self._channel_info(channel)

    @maps_errors
    async def add_channel_writer(self, chat: ChatRef, *, phone: str) -> None:
        """Add another account (by its phone number) to a channel this account administers, as an admin who may
        post, edit and delete posts."""
        resolved = await self._client(functions.contacts.ResolvePhoneRequest(utils.parse_phone(phone) or phone))
        user = next((user for user in resolved.users if isinstance(user, types.User)), None)
        if user is None:
            raise NotFound(OPERATOR_WORDS["PHONE_NOT_OCCUPIED"], rpc="PHONE_NOT_OCCUPIED")
        writer = types.InputUser(user_id=user.id, access_hash=user.access_hash or 0)
        try:
            invited = await self._client(functions.channels.InviteToChannelRequest(input_channel(chat), [writer]))
        except errors.UserAlreadyParticipantError:
            invited = None
        if invited is not None and invited.missing_invitees:
            raise TargetForbidden(OPERATOR_WORDS["USER_PRIVACY_RESTRICTED"], rpc="USER_PRIVACY_RESTRICTED")
        rights = types.ChatAdminRights(post_messages=True, edit_messages=True, delete_messages=True)
        await self._client(functions.channels.EditAdminRequest(input_channel(chat), writer, rights, rank=""))

    @maps_errors
    async def add_channel_bot(self, chat: ChatRef, *, username: str) -> None:
        """Make a bot (by its @username) an admin of a channel this account administers, who may post: how the
        members' bot reads the archive channel's files to send them on."""
        resolved = await self._client(functions.contacts.ResolveUsernameRequest(username.lstrip("@")))
        user = next((user for user in resolved.users if isinstance(user, types.User) and user.bot), None)
        if user is None:
            raise NotFound(f"@{username.lstrip('@')} is no bot.", rpc="USERNAME_NOT_OCCUPIED")
        bot = types.InputUser(user_id=user.id, access_hash=user.access_hash or 0)
        rights = types.ChatAdminRights(post_messages=True)
        await self._client(functions.channels.EditAdminRequest(input_channel(chat), bot, rights, rank=""))


def _a_person(user: types.User) -> bool:
    """A private chat worth sending to: not a bot, a deleted account, the account itself (Saved Messages) or
    Telegram's own service accounts."""
    return not (user.bot or user.deleted or user.is_self or user.support or user.id == SERVICE_NOTIFICATIONS_USER_ID)


def _group_info(group: types.Chat) -> ChatInfo:
    return ChatInfo(
        id=group.id,
        access_hash=0,
        title=group.title,
        type=GROUP,
        can_post=bool(group.creator or group.admin_rights) or not _banned(group.default_banned_rights),
        members_count=group.participants_count,
    )


def _entity_preview(entity, *, already_member: bool) -> ChatPreview:
    """A preview from the chat Telegram sent (a public channel, or one the account is in or may peek into)."""
    if isinstance(entity, types.Chat):
        return ChatPreview(
            title=entity.title,
            type=GROUP,
            members_count=entity.participants_count,
            forum=False,
            already_member=already_member,
        )
    if not isinstance(entity, types.Channel):  # ChannelForbidden / ChatForbidden: banned from it
        raise TargetForbidden(OPERATOR_WORDS["CHANNEL_PRIVATE"], rpc="CHANNEL_PRIVATE")
    return ChatPreview(
        title=entity.title,
        type=CHANNEL if entity.broadcast else SUPERGROUP,
        members_count=entity.participants_count,
        forum=bool(entity.forum),
        already_member=already_member,
        request_needed=bool(entity.join_request),
        username=entity.username or "",
    )


def _updates_chat(updates, chat_id: int | None = None) -> types.Channel | types.Chat | None:
    """The chat an Updates answer (to a join or a create) names: by id, or the first one."""
    for chat in getattr(updates, "chats", ()):
        if isinstance(chat, types.Channel | types.Chat) and chat_id in (None, chat.id):
            return chat
    return None


def _banned(rights: types.ChatBannedRights | None) -> bool:
    return bool(rights and rights.send_messages)
