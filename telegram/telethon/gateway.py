"""The real gateway: Telethon 1.45 over MTProto, one client per account per task.

Ids are Telegram's own: a channel or supergroup is its positive `channel_id` (not the -100… "marked"
form of Bot API and `telethon.utils.get_peer_id`), a basic group its positive `chat_id`, a person (a private
chat) their `user_id`; `ChatRef.type` says which input peer to build. Chats are addressed by stored
(id, access_hash), never resolved by name.

Why this size: one adapter of the TelegramGateway protocol, a method per call, each with its error mapping.
"""

import mimetypes
import os
import struct
from collections.abc import AsyncIterator, Sequence
from contextlib import aclosing
from dataclasses import replace
from datetime import datetime
from typing import Self

from django.views.decorators.debug import sensitive_variables
from telethon import errors, functions, types, utils
from telethon.password import compute_check
from telethon.sessions import StringSession

from core.leases import SessionBusy
from telegram.errors import AuthRequired, FileTooLarge, LoginRefused, NotFound, SessionInUse, TargetForbidden
from telegram.formatting import entity_to_tl
from telegram.records import (
    ALREADY_MEMBER,
    CHANNEL,
    GENERAL_TOPIC_ID,
    GROUP,
    HISTORY_PAGE,
    JOINED,
    LAST_MESSAGE_BATCH,
    PART_SIZE,
    PREMIUM_UPLOAD_MAX_BYTES,
    REQUESTED,
    SELF,
    SUPERGROUP,
    TOPICS_PAGE,
    UPLOAD_MAX_BYTES,
    USER,
    AccountInfo,
    ChatInfo,
    ChatLink,
    ChatPreview,
    ChatRef,
    DocumentInfo,
    DocumentMessage,
    DocumentPage,
    JoinResult,
    MediaHandle,
    MessageEntity,
    SentMessage,
    TopicInfo,
    album_random_id,
)
from telegram.telethon import transfers
from telegram.telethon.client import StashcastClient
from telegram.telethon.errors import OPERATOR_WORDS, mapped_errors, maps_errors

PHOTO_MIME_TYPES = ("image/jpeg", "image/png")  # what Telegram accepts as a photo; other images go as documents
SERVICE_NOTIFICATIONS_USER_ID = 777000  # "Telegram", who sends login codes: in every account's dialogs, no person


class TelethonGateway:
    def __init__(
        self,
        phone: str,
        session: str,
        api_id: int | str,
        api_hash: str,
        *,
        client_factory=None,
        lease=None,
        wait_seconds: float = 0,
        parts_in_flight: int = 1,
        connections: int = 1,
        account_parts_in_flight: int | None = None,
        transfer_budget=None,
    ):
        self.phone = phone
        # Every auth request carries the number as official clients send it, digits only: Telegram answers
        # PHONE_CODE_EXPIRED to a signIn whose number is spelled otherwise than its sendCode's.
        self._login_phone = utils.parse_phone(phone) or phone
        self._lease_factory = lease  # session_lease(wait_seconds=...) of this account, or None (tools, tests)
        self._wait_seconds = wait_seconds
        self._lease_block = None
        self._lease = None
        self._session = session
        self._api_id = int(api_id)
        self._api_hash = api_hash
        self._client_factory = client_factory or StashcastClient
        self._client = None
        self._parts_in_flight = parts_in_flight
        self._connections = connections
        self._account_parts_in_flight = account_parts_in_flight or parts_in_flight
        self._senders: transfers.SenderPool | None = None
        self._transfer_budget = transfer_budget  # awaited with each file part's bytes (transfers.SenderPool)
        self._me: AccountInfo | None = None
        self._topics: dict[int, list[TopicInfo]] = {}

    async def __aenter__(self) -> Self:
        try:
            session = StringSession(self._session)
        except (ValueError, struct.error) as exc:
            raise AuthRequired("The stored Telegram session cannot be read; log in again.") from exc
        await self._take_lease(self._wait_seconds)
        self._client = self._client_factory(
            session,
            self._api_id,
            self._api_hash,
            # Callers own pacing: every FloodWait reaches them instead of being slept through here.
            flood_sleep_threshold=0,
            # One in-place retry (also the second attempt a DC migration needs at login); callers back off
            # beyond that. Without raise_last_call_error Telethon would hide the real error in a ValueError.
            request_retries=2,
            raise_last_call_error=True,
            # A worker task only makes requests: no update stream to keep up with.
            receive_updates=False,
        )
        await self._connect()
        return self

    async def _connect(self) -> None:
        try:
            with mapped_errors():
                await self._client.connect()
            self._senders = transfers.SenderPool(
                self._client,
                connections=self._connections,
                account_parts_in_flight=self._account_parts_in_flight,
                budget=self._transfer_budget,
            )
        except BaseException:
            # A connect refused half-way (FLOOD_WAIT, AUTH_KEY_DUPLICATED) must not leave the socket open.
            await self._client.disconnect()
            await self._release_lease()
            raise

    async def __aexit__(self, *exc_info) -> None:
        # The client object stays, disconnected, so export_session() still works after the block.
        try:
            try:
                await self._close_part_senders()
            finally:
                await self._client.disconnect()
        finally:
            await self._release_lease()

    async def _close_part_senders(self) -> None:
        senders, self._senders = self._senders, None
        if senders is not None:
            await senders.close()

    async def _take_lease(self, wait_seconds: float) -> None:
        if self._lease_factory is None:
            return
        block = self._lease_factory(wait_seconds=wait_seconds)
        try:
            self._lease = await block.__aenter__()
        except SessionBusy as exc:
            raise SessionInUse(f"{exc} It is tried again later.", rpc="SESSION_IN_USE") from None
        self._lease_block = block

    async def _release_lease(self) -> None:
        block, self._lease_block, self._lease = self._lease_block, None, None
        if block is not None:
            await block.__aexit__(None, None, None)

    async def wanted_elsewhere(self) -> bool:
        return self._lease is not None and await self._lease.wanted()

    async def hand_over_if_wanted(self, *, wait_seconds: float) -> bool:
        if not await self.wanted_elsewhere():
            return False
        await self._close_part_senders()
        await self._client.disconnect()
        await self._release_lease()
        await self._take_lease(wait_seconds)
        await self._connect()
        return True

    @property
    def requests_sent(self) -> int:
        return getattr(self._client, "requests_sent", 0)

    def export_session(self) -> str:
        if self._client is None:
            return self._session
        return self._client.session.save()

    # Login

    @maps_errors
    async def send_code(self) -> str:
        # Sent as a plain request: Telethon's send_code_request breaks on the answers below.
        sent = await self._client(
            functions.auth.SendCodeRequest(self._login_phone, self._api_id, self._api_hash, types.CodeSettings())
        )
        if isinstance(sent, types.auth.SentCodePaymentRequired):
            raise LoginRefused(
                "Telegram asks for a payment before it sends a login code to this number. Log in once in an "
                "official Telegram app on a phone, then ask for a code here again.",
                rpc="SENT_CODE_PAYMENT_REQUIRED",
            )
        if isinstance(getattr(sent, "type", None), types.auth.SentCodeTypeSetUpEmailRequired):
            raise LoginRefused(
                "Telegram wants a login email set up for this number first. Open an official Telegram app, set "
                "up the login email it asks for, then ask for a code here again.",
                rpc="SENT_CODE_EMAIL_SETUP_REQUIRED",
            )
        return sent.phone_code_hash

    @maps_errors
    async def sign_in_code(self, *, code: str, phone_code_hash: str) -> AccountInfo:
        user = await self._client.sign_in(phone=self._login_phone, code=code, phone_code_hash=phone_code_hash)
        return await self._remember_me(user)

    @sensitive_variables("password")
    async def sign_in_password(self, *, password: str) -> AccountInfo:
        # The SRP proof is computed here rather than in Telethon's sign_in, and errors are mapped inside
        # (not by a decorator holding the arguments), so no frame but this one, whose variables error
        # reports hide, ever holds the password.
        with mapped_errors():
            algorithm = await self._client(functions.account.GetPasswordRequest())
            result = await self._client(functions.auth.CheckPasswordRequest(compute_check(algorithm, password)))
            return await self._remember_me(result.user)

    @maps_errors
    async def get_me(self) -> AccountInfo:
        # Asked directly: Telethon's get_me() turns every 401 into None, USER_DEACTIVATED_BAN included.
        users = await self._client(functions.users.GetUsersRequest([types.InputUserSelf()]))
        if not users or not isinstance(users[0], types.User):
            raise AuthRequired("This Telegram session is not logged in.")
        return await self._remember_me(users[0])

    async def _upload_limits(self) -> tuple[int, int]:
        """Bytes a file upload may have, for other accounts and for Premium, from Telegram's app config."""
        config = await self._client(functions.help.GetAppConfigRequest(hash=0))
        values = {}
        if isinstance(config, types.help.AppConfig) and isinstance(config.config, types.JsonObject):
            values = {item.key: item.value for item in config.config.value}

        def limit(key: str, default: int) -> int:
            value = values.get(key)
            return round(value.value * PART_SIZE) if isinstance(value, types.JsonNumber) else default

        return (
            limit("upload_max_fileparts_default", UPLOAD_MAX_BYTES),
            limit("upload_max_fileparts_premium", PREMIUM_UPLOAD_MAX_BYTES),
        )

    async def _remember_me(self, user: types.User) -> AccountInfo:
        if user.phone and user.phone.lstrip("+") != self.phone.lstrip("+"):
            raise AuthRequired("This stored session belongs to another Telegram account; log in again.")
        default_limit, premium_limit = await self._upload_limits()
        self._me = AccountInfo(
            user_id=user.id,
            phone=self.phone,
            first_name=user.first_name or "",
            last_name=user.last_name or "",
            username=user.username or "",
            premium=bool(user.premium),
            upload_max_bytes=premium_limit if user.premium else default_limit,
        )
        return self._me

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
            full = await self._client(functions.channels.GetFullChannelRequest(_input_channel(channel)))
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
                updates = await self._client(functions.channels.JoinChannelRequest(_input_channel(channel)))
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
                await self._client(functions.channels.LeaveChannelRequest(_input_channel(chat)))
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
            invited = await self._client(functions.channels.InviteToChannelRequest(_input_channel(chat), [writer]))
        except errors.UserAlreadyParticipantError:
            invited = None
        if invited is not None and invited.missing_invitees:
            raise TargetForbidden(OPERATOR_WORDS["USER_PRIVACY_RESTRICTED"], rpc="USER_PRIVACY_RESTRICTED")
        rights = types.ChatAdminRights(post_messages=True, edit_messages=True, delete_messages=True)
        await self._client(functions.channels.EditAdminRequest(_input_channel(chat), writer, rights, rank=""))

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
        await self._client(functions.channels.EditAdminRequest(_input_channel(chat), bot, rights, rank=""))

    # Reading

    @maps_errors
    async def get_last_message_ids(self, chats: Sequence[ChatRef]) -> dict[int, int]:
        last_ids = {}
        for start in range(0, len(chats), LAST_MESSAGE_BATCH):
            last_ids |= await self._last_message_ids(chats[start : start + LAST_MESSAGE_BATCH])
        return last_ids

    async def _last_message_ids(self, batch: Sequence[ChatRef]) -> dict[int, int]:
        """One request per batch; a chat the account left fails the whole batch, so it is halved until the
        chats it cannot see are alone (and left out: their scan reports the error)."""
        request = functions.messages.GetPeerDialogsRequest(
            peers=[types.InputDialogPeer(_input_peer(chat)) for chat in batch]
        )
        try:
            with mapped_errors():
                result = await self._client(request)
        except TargetForbidden:
            if len(batch) == 1:
                return {}
            half = len(batch) // 2
            return await self._last_message_ids(batch[:half]) | await self._last_message_ids(batch[half:])
        return {_peer_chat_id(dialog.peer): dialog.top_message for dialog in result.dialogs}

    @maps_errors
    async def list_topics(self, chat: ChatRef, *, offset_topic_id: int = 0) -> list[TopicInfo]:
        # Telegram pages topics by activity (or creation date), not by id: read them all once per gateway,
        # then serve id-ordered pages from memory. A new listing (offset 0) reads them again.
        if offset_topic_id == 0 or chat.id not in self._topics:
            self._topics[chat.id] = await self._fetch_topics(chat)
        return [topic for topic in self._topics[chat.id] if topic.id > offset_topic_id][:TOPICS_PAGE]

    async def _fetch_topics(self, chat: ChatRef) -> list[TopicInfo]:
        topics: dict[int, TopicInfo] = {}
        offset_date, offset_id, offset_topic = None, 0, 0
        while True:
            try:
                result = await self._client(
                    functions.messages.GetForumTopicsRequest(
                        peer=_input_peer(chat),
                        offset_date=offset_date,
                        offset_id=offset_id,
                        offset_topic=offset_topic,
                        limit=TOPICS_PAGE,
                    )
                )
            except errors.RPCError as exc:
                if exc.message == "CHANNEL_FORUM_MISSING":  # not a forum (any more): no topics
                    return []
                raise
            page = [topic for topic in result.topics if isinstance(topic, types.ForumTopic)]
            new = [topic for topic in page if topic.id not in topics]
            for topic in new:
                topics[topic.id] = TopicInfo(id=topic.id, title=topic.title, top_message_id=topic.top_message)
            if len(result.topics) < TOPICS_PAGE or not new:
                break
            last = page[-1]
            if result.order_by_create_date:
                offset_date = last.date
            else:
                dates = {message.id: getattr(message, "date", None) for message in result.messages}
                offset_date = dates.get(last.top_message)
            offset_id, offset_topic = last.top_message, last.id
        return sorted(topics.values(), key=lambda topic: topic.id)

    @maps_errors
    async def search_documents(
        self,
        chat: ChatRef,
        *,
        min_id: int,
        offset_id: int = 0,
        topic_id: int | None = None,
        min_date: datetime | None = None,
    ) -> DocumentPage:
        # Paged as Telethon's own iterator pages: Telegram does not honour min_id/max_id near the top of
        # history, and some chats answer short pages mid-history, so ids are checked here, and only an
        # empty page, a whole answer (not a slice) or reaching min_id (or min_date) ends the search.
        if min_date is not None:
            min_date = min_date.replace(microsecond=0)  # Telegram dates are whole seconds
        result = await self._search(
            chat, types.InputMessagesFilterDocument(), offset_id=offset_id, topic_id=topic_id, min_date=min_date
        )
        forum = _is_forum(result, chat)
        page = [
            message
            for message in result.messages
            if isinstance(message, types.Message)
            and message.id > min_id
            and (not offset_id or message.id < offset_id)
            and (min_date is None or message.date >= min_date)
        ]
        lowest = min((message.id for message in result.messages), default=0)
        reached_date = min_date is not None and any(message.date < min_date for message in result.messages)
        done = _last_search_page(result, offset_id=offset_id) or lowest <= min_id + 1 or reached_date
        return DocumentPage(
            messages=[_document_message(chat, message, forum) for message in page],
            next_offset_id=None if done else lowest,
        )

    @maps_errors
    async def search_photos(self, chat: ChatRef, *, min_date: datetime, offset_id: int = 0) -> DocumentPage:
        result = await self._search(chat, types.InputMessagesFilterPhotos(), offset_id=offset_id, min_date=min_date)
        forum = _is_forum(result, chat)
        page = [
            message
            for message in result.messages
            if isinstance(message, types.Message)
            and isinstance(message.media, types.MessageMediaPhoto)
            and (not offset_id or message.id < offset_id)
        ]
        # Dates go down as ids do: a page that reached min_date is the last too.
        done = _last_search_page(result, offset_id=offset_id) or any(m.date < min_date for m in result.messages)
        return DocumentPage(
            messages=[_document_message(chat, message, forum) for message in page if message.date >= min_date],
            next_offset_id=None if done else min(message.id for message in result.messages),
        )

    async def _search(
        self, chat: ChatRef, message_filter, *, offset_id: int, min_date: datetime | None = None, topic_id=None
    ):
        """One page of messages.search in a chat (or one topic of a forum), newest first below offset_id."""
        return await self._client(
            functions.messages.SearchRequest(
                peer=_input_peer(chat),
                q="",
                filter=message_filter,
                min_date=min_date,
                max_date=None,
                offset_id=offset_id,
                add_offset=0,
                limit=HISTORY_PAGE,
                max_id=0,
                min_id=0,
                hash=0,
                top_msg_id=topic_id,
            )
        )

    @maps_errors
    async def get_messages(self, chat: ChatRef, ids: Sequence[int]) -> dict[int, DocumentMessage | None]:
        found: dict[int, DocumentMessage | None] = dict.fromkeys(ids)
        for start in range(0, len(ids), HISTORY_PAGE):
            message_ids = [types.InputMessageID(message_id) for message_id in ids[start : start + HISTORY_PAGE]]
            if chat.type in (GROUP, USER):
                # Basic groups and private chats share the account's message box: ids are unique to one chat there.
                result = await self._client(functions.messages.GetMessagesRequest(id=message_ids))
            else:
                result = await self._client(
                    functions.channels.GetMessagesRequest(channel=_input_channel(chat), id=message_ids)
                )
            forum = _is_forum(result, chat)
            for message in result.messages:
                if (
                    isinstance(message, types.Message | types.MessageService)
                    and message.id in found
                    and _peer_chat_id(message.peer_id) == chat.id
                ):
                    found[message.id] = _document_message(chat, message, forum)
        return found

    async def iter_download(
        self, chat: ChatRef, document: DocumentInfo, *, offset: int = 0
    ) -> AsyncIterator[memoryview]:
        # Requests start on PART_SIZE boundaries (upload.getFile must not cross a 1 MiB boundary);
        # a resume from the middle of a part drops the bytes already held.
        if offset >= document.size:
            return  # all bytes held already
        skip = offset % PART_SIZE
        parts = transfers.download(
            self._client,
            self._senders,
            _file_location(document),
            dc_id=document.location["dc_id"],
            size=document.size,
            first_part=offset // PART_SIZE,
            parts_in_flight=self._parts_in_flight,
        )
        with mapped_errors():
            async with aclosing(parts):
                async for data in parts:
                    if skip:
                        data, skip = data[skip:], 0
                    if data:
                        yield data

    @maps_errors
    async def read_range(self, chat: ChatRef, document: DocumentInfo, *, offset: int, length: int) -> bytes:
        offset = max(0, offset)
        if offset >= document.size or length <= 0:
            return b""
        return await transfers.read_range(
            self._client,
            self._senders,
            _file_location(document),
            dc_id=document.location["dc_id"],
            offset=offset,
            length=min(length, document.size - offset),
        )

    # Writing

    @maps_errors
    async def upload_document(
        self,
        chat: ChatRef,
        *,
        path: str,
        file_name: str,
        random_id: int,
        caption: str = "",
        topic_id: int | None = None,
    ) -> SentMessage:
        size = os.path.getsize(path)
        limit = (self._me or await self.get_me()).upload_max_bytes
        if size > limit:
            raise FileTooLarge(f"{file_name} is {size} bytes, above this account's upload limit of {limit} bytes.")
        uploaded = await self._upload_file(path, file_name)

        def request(uploaded):
            media = types.InputMediaUploadedDocument(
                file=uploaded,
                mime_type=mimetypes.guess_type(file_name)[0] or "application/octet-stream",
                attributes=[types.DocumentAttributeFilename(file_name)],
                force_file=True,
            )
            return functions.messages.SendMediaRequest(
                peer=_input_peer(chat), media=media, message=caption, random_id=random_id, reply_to=_reply_to(topic_id)
            )

        return await self._with_missing_parts(path, uploaded, lambda: self._send(chat, request(uploaded)))

    @maps_errors
    async def upload_media(self, *, path: str, file_name: str, mime_type: str) -> MediaHandle:
        uploaded = await self._upload_file(path, file_name)
        if mime_type in PHOTO_MIME_TYPES:
            media = types.InputMediaUploadedPhoto(file=uploaded)
        else:
            media = types.InputMediaUploadedDocument(
                file=uploaded, mime_type=mime_type, attributes=[types.DocumentAttributeFilename(file_name)]
            )
        # Uploaded to the account's own Saved Messages peer: the result can be sent to any chat.
        request = functions.messages.UploadMediaRequest(peer=types.InputPeerSelf(), media=media)
        result = await self._with_missing_parts(path, uploaded, lambda: self._client(request))
        if isinstance(result, types.MessageMediaPhoto):
            return MediaHandle(kind="photo", payload=_handle_payload(result.photo))
        return MediaHandle(kind="document", payload=_handle_payload(result.document))

    async def _upload_file(self, path: str, file_name: str) -> types.InputFile | types.InputFileBig:
        return await transfers.upload(
            self._client, self._senders, path, file_name=file_name, parts_in_flight=self._parts_in_flight
        )

    async def _with_missing_parts(self, path: str, uploaded, send):
        """Send what refers to an uploaded file; a part Telegram says is missing (FILE_PART_X_MISSING) is sent
        again, once per part, then the send is tried again."""
        resent = set()
        while True:
            try:
                return await send()
            except errors.FilePartMissingError as exc:
                if exc.which in resent:
                    raise
                resent.add(exc.which)
                await transfers.resave(self._client, self._senders, path, uploaded, exc.which)

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
                peer=_input_peer(chat),
                message=text,
                entities=tl_entities,
                random_id=random_id,
                reply_to=_reply_to(topic_id),
                silent=silent or None,
                no_webpage=not link_preview or None,
            )
        else:
            request = functions.messages.SendMediaRequest(
                peer=_input_peer(chat),
                media=_input_media(media),
                message=text,
                entities=tl_entities,
                random_id=random_id,
                reply_to=_reply_to(topic_id),
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
            peer=_input_peer(chat),
            multi_media=[
                types.InputSingleMedia(
                    media=_input_media(handle),
                    random_id=album_random_id(random_id, index),
                    message=text if index == 0 else "",
                    entities=tl_entities if index == 0 else None,
                )
                for index, handle in enumerate(media)
            ],
            reply_to=_reply_to(topic_id),
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
            peer=_input_peer(chat),
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
            await self._client(functions.channels.DeleteMessagesRequest(channel=_input_channel(chat), id=list(ids)))

    @maps_errors
    async def pin_message(self, chat: ChatRef, message_id: int, *, unpin: bool = False) -> None:
        request = functions.messages.UpdatePinnedMessageRequest(
            peer=_input_peer(chat), id=message_id, silent=True, unpin=unpin or None
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
            from_peer=_input_peer(from_chat),
            id=[message_id],
            to_peer=_input_peer(to_chat),
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
            peer=_input_peer(to_chat),
            media=types.InputMediaDocument(id=document),
            message=caption,
            random_id=random_id,
            reply_to=_reply_to(topic_id),
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


def _last_search_page(result, *, offset_id: int) -> bool:
    """Whether a messages.search page ends the search: an empty page, a whole answer (not a slice), or a first
    page holding every match (Telegram's count, when it says it is exact)."""
    whole = (
        not offset_id and not getattr(result, "inexact", False) and len(result.messages) >= getattr(result, "count", 0)
    )
    return not result.messages or whole or isinstance(result, types.messages.Messages)


def _file_location(document: DocumentInfo) -> types.InputDocumentFileLocation | types.InputPhotoFileLocation:
    # A photo is read at its largest size (thumb_size names it); a document whole ("").
    location = document.location
    location_class = types.InputPhotoFileLocation if location.get("photo") else types.InputDocumentFileLocation
    return location_class(
        id=location["id"],
        access_hash=location["access_hash"],
        file_reference=bytes.fromhex(location["file_reference"]),
        thumb_size=location.get("thumb_size", ""),
    )


def _input_peer(chat: ChatRef) -> types.TypeInputPeer:
    if chat.type == SELF:
        return types.InputPeerSelf()
    if chat.type == GROUP:
        return types.InputPeerChat(chat_id=chat.id)
    if chat.type == USER:
        return types.InputPeerUser(user_id=chat.id, access_hash=chat.access_hash)
    return types.InputPeerChannel(channel_id=chat.id, access_hash=chat.access_hash)


def _input_channel(chat: ChatRef | types.Channel) -> types.InputChannel:
    return types.InputChannel(channel_id=chat.id, access_hash=chat.access_hash or 0)


def _peer_chat_id(peer: types.TypePeer) -> int | None:
    if isinstance(peer, types.PeerChannel):
        return peer.channel_id
    if isinstance(peer, types.PeerChat):
        return peer.chat_id
    if isinstance(peer, types.PeerUser):
        return peer.user_id
    return None


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


def _is_forum(result, chat: ChatRef) -> bool:
    """Whether the chat is a forum, from the chat objects Telegram sends along with messages."""
    return any(isinstance(c, types.Channel) and c.id == chat.id and c.forum for c in getattr(result, "chats", ()))


def _topic_id(message: types.Message | types.MessageService, forum: bool) -> int | None:
    if not forum:
        return None
    reply = message.reply_to
    if isinstance(reply, types.MessageReplyHeader) and reply.forum_topic:
        return reply.reply_to_top_id or reply.reply_to_msg_id
    return GENERAL_TOPIC_ID  # General's messages carry no topic header


def _reply_to_id(message: types.Message | types.MessageService) -> int | None:
    """The message this one answers; a forum message's header names its topic, which is no answer."""
    reply = message.reply_to
    if not isinstance(reply, types.MessageReplyHeader) or reply.reply_to_msg_id is None:
        return None
    if reply.forum_topic and not reply.reply_to_top_id:
        return None
    return reply.reply_to_msg_id


def _document_message(chat: ChatRef, message: types.Message | types.MessageService, forum: bool) -> DocumentMessage:
    media = getattr(message, "media", None)
    document = photo = None
    if isinstance(media, types.MessageMediaDocument) and isinstance(media.document, types.Document):
        document = _document_info(media.document)
    if isinstance(media, types.MessageMediaPhoto) and isinstance(media.photo, types.Photo):
        photo = _photo_info(media.photo)
    return DocumentMessage(
        chat_id=chat.id,
        id=message.id,
        date=message.date,
        topic_id=_topic_id(message, forum),
        text=getattr(message, "message", "") or "",
        document=document,
        photo=photo,
        grouped_id=getattr(message, "grouped_id", None),
        reply_to_id=_reply_to_id(message),
        edit_date=getattr(message, "edit_date", None),
    )


def _photo_info(photo: types.Photo) -> DocumentInfo | None:
    """The photo's largest plain size, as a document to download."""
    sizes = [size for size in photo.sizes if isinstance(size, types.PhotoSize | types.PhotoSizeProgressive)]
    if not sizes:
        return None
    largest = max(sizes, key=lambda size: size.w * size.h)
    byte_size = largest.size if isinstance(largest, types.PhotoSize) else max(largest.sizes)
    return DocumentInfo(
        id=photo.id,
        name="photo.jpg",
        size=byte_size,
        mime_type="image/jpeg",
        location={
            "photo": True,
            "id": photo.id,
            "access_hash": photo.access_hash,
            "file_reference": photo.file_reference.hex(),
            "dc_id": photo.dc_id,
            "thumb_size": largest.type,
        },
    )


def _document_info(document: types.Document) -> DocumentInfo:
    name = next(
        (a.file_name for a in document.attributes if isinstance(a, types.DocumentAttributeFilename)),
        "",
    )
    return DocumentInfo(
        id=document.id,
        name=name,
        size=document.size,
        mime_type=document.mime_type or "application/octet-stream",
        location={
            "id": document.id,
            "access_hash": document.access_hash,
            "file_reference": document.file_reference.hex(),
            "dc_id": document.dc_id,
        },
    )


def _reply_to(topic_id: int | None) -> types.InputReplyToMessage | None:
    # General (topic 1) takes no reply header, like any message of a chat without topics.
    if topic_id is None or topic_id == GENERAL_TOPIC_ID:
        return None
    return types.InputReplyToMessage(reply_to_msg_id=topic_id, top_msg_id=topic_id)


def _handle_payload(media: types.Photo | types.Document) -> dict:
    return {"id": media.id, "access_hash": media.access_hash, "file_reference": media.file_reference.hex()}


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
