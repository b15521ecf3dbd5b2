"""The one seam to Telegram. Callers never import Telethon.

A gateway serves one account and lives inside one `asyncio.run`:

    async with open_gateway(phone=account.phone, session=session) as gateway:
        me = await gateway.get_me()

Every method raises only the errors of `telegram.errors`.
"""

import functools
from collections.abc import AsyncIterator, Sequence
from datetime import datetime
from typing import Protocol, Self

from django.conf import settings

from core.leases import session_lease
from telegram.records import (
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
)
from telegram.telethon.bot import TelethonBot, bot_lease_name
from telegram.telethon.gateway import TelethonGateway

SANDBOX_API_ID, SANDBOX_API_HASH = 1, "sandbox"  # the sandbox server takes any application


class TelegramGateway(Protocol):
    phone: str

    async def __aenter__(self) -> Self: ...

    async def __aexit__(self, *exc_info) -> None: ...

    async def wanted_elsewhere(self) -> bool:
        """Whether another process waits for this account's session (see hand_over_if_wanted)."""

    async def hand_over_if_wanted(self, *, wait_seconds: float) -> bool:
        """When another process waits for this account's session: let it have it, then take it back
        (waiting up to wait_seconds, else SessionInUse). Returns whether it was handed over."""

    @property
    def requests_sent(self) -> int:
        """Telegram requests this gateway has sent so far (each download or upload part counts one)."""

    def export_session(self) -> str:
        """The session to store (encrypted) after a login step; '' before any."""

    # Login
    async def send_code(self) -> str:
        """Ask Telegram to send a login code; returns the phone_code_hash for sign_in_code."""

    async def sign_in_code(self, *, code: str, phone_code_hash: str) -> AccountInfo:
        """Raises CodeInvalid, CodeExpired or PasswordRequired (two-step verification)."""

    async def sign_in_password(self, *, password: str) -> AccountInfo:
        """Raises PasswordInvalid."""

    async def get_me(self) -> AccountInfo: ...

    async def list_chats(self) -> list[ChatInfo]:
        """Channels, supergroups and groups the account is in, and the people it has a private chat with
        (type USER, id = their user id; not bots, deleted accounts, Telegram's service accounts or itself)."""

    async def chat_migrated_to(self, chat: ChatRef) -> ChatInfo | None:
        """The supergroup a basic group was upgraded to (Telegram's Chat.migrated_to), None when it was not.
        TargetForbidden when the account cannot see the group, or is not in the supergroup."""

    # Joining and creating
    async def preview_chat(self, link: ChatLink) -> ChatPreview:
        """What Telegram tells about a chat before joining (contacts.resolveUsername or messages.checkChatInvite).
        NotFound for a name or an invite that leads nowhere (expired, revoked, mistyped)."""

    async def join_chat(self, link: ChatLink) -> JoinResult:
        """Join by @username (channels.joinChannel) or invite (messages.importChatInvite). Already a member and a
        join request left for the chat's admins are outcomes, not errors; LimitReached when the account is in too
        many channels."""

    async def leave_chat(self, chat: ChatRef) -> bool:
        """Leave a channel or group; False when the account was not in it."""

    async def create_channel(self, *, title: str, about: str = "") -> ChatInfo:
        """A new broadcast channel (channels.createChannel) this account owns."""

    async def add_channel_writer(self, chat: ChatRef, *, phone: str) -> None:
        """Add the account with this phone number to a channel this account administers, as an admin who posts
        (contacts.resolvePhone, channels.inviteToChannel, channels.editAdmin)."""

    async def add_channel_bot(self, chat: ChatRef, *, username: str) -> None:
        """Make a bot (by its @username) an admin who may post in a channel this account administers. NotFound
        when the username is no bot; TargetForbidden when the account is no admin there."""

    # Reading
    async def get_last_message_ids(self, chats: Sequence[ChatRef]) -> dict[int, int]:
        """Last message id per chat id, in one request per LAST_MESSAGE_BATCH chats."""

    async def list_topics(self, chat: ChatRef, *, offset_topic_id: int = 0) -> list[TopicInfo]:
        """One page (TOPICS_PAGE) of a forum's topics, ascending by id, after offset_topic_id."""

    async def search_documents(
        self,
        chat: ChatRef,
        *,
        min_id: int,
        offset_id: int = 0,
        topic_id: int | None = None,
        min_date: datetime | None = None,
    ) -> DocumentPage:
        """One request: a page of messages with documents, ids in (min_id, offset_id), newest first
        (offset_id 0 = from the newest); topic_id narrows to one forum topic, min_date to posts since then
        (a page that reaches it is the last). A short page is not the end: go on from `next_offset_id` until
        it is None."""

    async def search_photos(self, chat: ChatRef, *, min_date: datetime, offset_id: int = 0) -> DocumentPage:
        """One request: a page of the chat's photos posted since min_date (channel-wide, each with its topic),
        newest first, below offset_id (0: from the newest); go on from `next_offset_id` until it is None."""

    async def get_messages(self, chat: ChatRef, ids: Sequence[int]) -> dict[int, DocumentMessage | None]:
        """Fresh copies (fresh file references) of messages; None for those gone."""

    def iter_download(self, chat: ChatRef, document: DocumentInfo, *, offset: int = 0) -> AsyncIterator[memoryview]:
        """The document's (or a photo's) bytes from offset, in order, PART_SIZE chunks (read-only views), one
        request each; up to TRANSFER_PARTS_IN_FLIGHT requested at once. Close it (`contextlib.aclosing`) when
        stopping early."""

    async def read_range(self, chat: ChatRef, document: DocumentInfo, *, offset: int, length: int) -> bytes:
        """`length` bytes of the document from `offset` (fewer at its end), in a few small requests: an archive's
        header or directory read where it lies."""

    # Writing
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
        """Upload a file and post it as a document; FileTooLarge above the account's limit."""

    async def upload_media(self, *, path: str, file_name: str, mime_type: str) -> MediaHandle:
        """Upload once; the handle is reused for every send of this account."""

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
        """A retried random_id returns duplicate=True instead of posting twice. `entities` format the text
        (telegram.formatting); silent: members get no notification; link_preview False: no preview of the
        text's first link."""

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
        """2–10 media as one album, `text` its caption (on the first item). Each item's random_id is
        album_random_id(random_id, index); a retried album returns duplicate=True instead of posting twice.
        The SentMessage is the first item's, the others' ids in album_ids."""

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
        """Edit the account's own message in place: its text (or caption) and entities, and its media when given.
        The same content again is no error; a message gone is NotFound; one too old to edit (48 hours outside
        channels) is a TelegramError with rpc MESSAGE_EDIT_TIME_EXPIRED."""

    async def delete_messages(self, chat: ChatRef, ids: Sequence[int]) -> None:
        """Delete the account's own messages for everyone; ids already gone are no error."""

    async def pin_message(self, chat: ChatRef, message_id: int, *, unpin: bool = False) -> None:
        """Pin a message without notifying anyone (or unpin it); a message gone is NotFound."""

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
        """Post a copy of a message (its document, not its author) in to_chat; a retried random_id returns
        duplicate=True. caption None keeps the message's caption and "" drops it (messages.forwardMessages with
        drop_author, drop_media_captions); any other text goes under the same document instead (the message
        read fresh, then messages.sendMedia: two requests)."""


def open_gateway(
    *, phone: str, session: str = "", wait_seconds: float | None = None, transfer_budget=None
) -> TelegramGateway:
    """The Telethon gateway of one account, on Telegram or on the sandbox server (TELEGRAM_BACKEND).

    `transfer_budget` (an async callable) is awaited with each file part's bytes before the part is requested
    or sent, downloads and uploads alike: it may wait (a bandwidth cap) or raise to stop the transfer.

    Entering it takes the account's session lease first (waiting up to wait_seconds, default
    TELEGRAM_SESSION_WAIT_SECONDS, else SessionInUse): one process at a time talks to Telegram as an account.
    """
    wait = settings.TELEGRAM_SESSION_WAIT_SECONDS if wait_seconds is None else wait_seconds
    options = {
        "lease": functools.partial(session_lease, phone),
        "wait_seconds": wait,
        "parts_in_flight": settings.TRANSFER_PARTS_IN_FLIGHT,
        "connections": settings.TRANSFER_CONNECTIONS,
        "account_parts_in_flight": settings.TRANSFER_ACCOUNT_PARTS_IN_FLIGHT,
        "transfer_budget": transfer_budget,
    }
    if settings.TELEGRAM_BACKEND == "telethon":
        return TelethonGateway(
            phone=phone,
            session=session,
            api_id=settings.TELEGRAM_API_ID,
            api_hash=settings.TELEGRAM_API_HASH,
            **options,
        )
    # Imported here: a production process never loads the sandbox.
    from telegram.sandbox.sender import SandboxClient

    return TelethonGateway(
        phone=phone,
        session=session,
        api_id=SANDBOX_API_ID,
        api_hash=SANDBOX_API_HASH,
        client_factory=functools.partial(SandboxClient, world_path=settings.SANDBOX_PATH, phone=phone),
        **options,
    )


def open_bot(*, token: str, session: str = "", update_state: dict | None = None):
    """The bot of `token` (telegram/telethon/bot.py), on Telegram or on the sandbox server. Entering it takes the
    bot's session lease (without waiting: SessionInUse when another process runs this bot) and logs in."""
    lease = functools.partial(session_lease, bot_lease_name(token))
    if settings.TELEGRAM_BACKEND == "telethon":
        return TelethonBot(
            token,
            settings.TELEGRAM_API_ID,
            settings.TELEGRAM_API_HASH,
            lease=lease,
            session=session,
            update_state=update_state,
        )
    from telegram.sandbox.sender import SandboxClient

    factory = functools.partial(SandboxClient, world_path=settings.SANDBOX_PATH, phone=bot_lease_name(token))
    return TelethonBot(
        token,
        SANDBOX_API_ID,
        SANDBOX_API_HASH,
        client_factory=factory,
        lease=lease,
        session=session,
        update_state=update_state,
    )
