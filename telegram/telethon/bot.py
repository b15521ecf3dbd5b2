"""The bot's seam to Telegram: the same Telethon client, logged in with a bot token, reading its updates.

    async with open_bot(token=token) as bot:
        bot.on_message(handle_message)   # async (BotMessage) -> None
        bot.on_press(handle_press)       # async (BotPress) -> None
        await bot.run()

A bot resumes the session it was given (`session`, a Telethon string session) or logs in with its token
(auth.importBotAuthorization, as Telethon's `start(bot_token=...)` sends it); given the update state of its last
stop (`update_state`: pts, qts, date, seq), it asks Telegram for what it missed (updates.getDifference) before
anything new. After the block, `bot.session` and `bot.update_state` are what to keep for the next start. Every
method raises only the errors of `telegram.errors`.
"""

import asyncio
import io
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Self

from telethon import Button, errors, events, functions
from telethon.sessions import StringSession
from telethon.tl import types

from core.leases import SessionBusy
from telegram.errors import AuthRequired, NotFound, SessionInUse
from telegram.records import ChatRef
from telegram.telethon.client import StashcastClient
from telegram.telethon.errors import mapped_errors

log = logging.getLogger(__name__)

TOKEN_REFUSED = "Telegram refused the bot token; paste the token BotFather gave (or revoked and gave anew)."
# Inline keyboard rows of (text, callback data ≤ 64 bytes)
Buttons = Sequence[Sequence[tuple[str, bytes]]]


@dataclass(frozen=True)
class BotMessage:
    """A person wrote to the bot."""

    user_id: int
    message_id: int
    text: str
    first_name: str
    username: str


@dataclass(frozen=True)
class BotPress:
    """A person pressed an inline button of one of the bot's messages."""

    query_id: int
    user_id: int
    message_id: int
    data: bytes


def bot_lease_name(token: str) -> str:
    """The session lease of a bot: by its id (the token's part before ':'), never the secret."""
    return f"bot:{token.split(':', 1)[0]}"


def _state(kept: dict) -> types.updates.State:
    return types.updates.State(
        pts=kept["pts"],
        qts=kept["qts"],
        date=datetime.fromtimestamp(kept["date"], tz=UTC),
        seq=kept["seq"],
        unread_count=0,
    )


def _markup(buttons: Buttons | None):
    return [[Button.inline(text, data) for text, data in row] for row in buttons] if buttons else None


class TelethonBot:
    def __init__(
        self,
        token: str,
        api_id: int,
        api_hash: str,
        *,
        client_factory=None,
        lease=None,
        session: str = "",
        update_state: dict | None = None,
    ):
        self._token = token
        self._session = session
        self._update_state = update_state or {}
        self.session = ""
        self.update_state: dict = {}
        self._message_handler: Callable[[BotMessage], Awaitable[None]] | None = None
        self._press_handler: Callable[[BotPress], Awaitable[None]] | None = None
        self._message_handler_set, self._press_handler_set = asyncio.Event(), asyncio.Event()
        self._api_id, self._api_hash = int(api_id), api_hash
        self._client_factory = client_factory or StashcastClient
        self._lease_factory = lease
        self._lease_block = None
        self._client = None
        self.user_id = 0
        self.username = ""

    async def __aenter__(self) -> Self:
        if self._lease_factory is not None:
            block = self._lease_factory(wait_seconds=0)
            try:
                await block.__aenter__()
            except SessionBusy as exc:
                raise SessionInUse(f"{exc} Another bot process runs with this token.", rpc="SESSION_IN_USE") from None
            self._lease_block = block
        session = StringSession(self._session)
        if self._session and self._update_state:
            session.set_update_state(0, _state(self._update_state))
        self._client = self._client_factory(
            session,
            self._api_id,
            self._api_hash,
            flood_sleep_threshold=0,  # the bot's pacing owns waits: a FloodWait reaches it
            request_retries=2,
            raise_last_call_error=True,
            receive_updates=True,
            catch_up=bool(self._update_state),  # what people wrote while the bot was down, before anything new
        )
        # Listening before the login: what the catch-up brings in waits until on_message / on_press are called.
        self._client.add_event_handler(
            self._handled_message, events.NewMessage(incoming=True, func=lambda e: e.is_private)
        )
        self._client.add_event_handler(self._handled_press, events.CallbackQuery())
        try:
            with mapped_errors():
                try:
                    await self._client.start(bot_token=self._token)
                except (errors.AccessTokenInvalidError, errors.AccessTokenExpiredError):
                    raise AuthRequired(TOKEN_REFUSED, rpc="ACCESS_TOKEN_INVALID") from None
                me = await self._client.get_me()
            if me is None or not me.bot:
                raise AuthRequired(TOKEN_REFUSED)
        except BaseException:
            await self.__aexit__(None, None, None)
            raise
        self.user_id, self.username = me.id, me.username or ""
        self.session = StringSession.save(self._client.session)
        return self

    async def __aexit__(self, *exc_info) -> None:
        try:
            if self._client is not None:
                await self._client.disconnect()  # writes the update state into the session
                state = self._client.session.get_update_state(0)
                if state is not None:
                    self.update_state = {
                        "pts": state.pts,
                        "qts": state.qts,
                        "date": int(state.date.timestamp()),
                        "seq": state.seq,
                    }
        finally:
            block, self._lease_block = self._lease_block, None
            if block is not None:
                await block.__aexit__(None, None, None)

    def on_message(self, handler: Callable[[BotMessage], Awaitable[None]]) -> None:
        self._message_handler = handler
        self._message_handler_set.set()

    def on_press(self, handler: Callable[[BotPress], Awaitable[None]]) -> None:
        self._press_handler = handler
        self._press_handler_set.set()

    async def _handled_message(self, event) -> None:
        await self._message_handler_set.wait()
        sender = await event.get_sender()
        await self._message_handler(
            BotMessage(
                user_id=event.sender_id,
                message_id=event.id,
                text=event.raw_text or "",
                first_name=getattr(sender, "first_name", "") or "",
                username=getattr(sender, "username", "") or "",
            )
        )

    async def _handled_press(self, event) -> None:
        await self._press_handler_set.wait()
        await self._press_handler(
            BotPress(
                query_id=event.query.query_id, user_id=event.sender_id, message_id=event.message_id, data=event.data
            )
        )

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Read updates until disconnected, or until `stop` is set."""
        disconnected = asyncio.ensure_future(self._client.disconnected)
        waits = {disconnected} | ({asyncio.ensure_future(stop.wait())} if stop is not None else set())
        _, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        for task in pending:
            task.cancel()

    async def send_text(self, user_id: int, text: str, *, buttons: Buttons | None = None) -> int:
        with mapped_errors():
            sent = await self._client.send_message(user_id, text, buttons=_markup(buttons), link_preview=False)
        return sent.id

    async def send_picture(
        self, user_id: int, picture: bytes, *, caption: str, buttons: Buttons | None = None, name: str = "preview.jpg"
    ) -> int:
        """A picture (uploaded by the bot) with a caption and buttons: a package's card with its preview."""
        upload = io.BytesIO(picture)
        upload.name = name
        with mapped_errors():
            sent = await self._client.send_file(user_id, upload, caption=caption, buttons=_markup(buttons))
        return sent.id

    async def edit_text(self, user_id: int, message_id: int, text: str, *, buttons: Buttons | None = None) -> None:
        with mapped_errors():
            await self._client.edit_message(user_id, message_id, text, buttons=_markup(buttons), link_preview=False)

    async def answer_press(self, query_id: int, text: str = "") -> None:
        with mapped_errors():
            await self._client(
                functions.messages.SetBotCallbackAnswerRequest(query_id=query_id, cache_time=0, message=text or None)
            )

    async def send_copy(self, user_id: int, chat: ChatRef, message_id: int, *, caption: str) -> int:
        """Send a person the document of a message of a channel the bot administers, with `caption` under it (the
        message's own caption is the archive's catalog line: it stays there): by the document itself, so the
        person sees a message from the bot, not a forward."""
        with mapped_errors():
            source = await self._client.get_messages(types.PeerChannel(chat.id), ids=message_id)
            if source is None or source.media is None:
                raise NotFound(f"Message {message_id} of chat {chat.id} is gone or has no file.")
            sent = await self._client.send_file(user_id, source.media, caption=caption)
        return sent.id

    async def is_member(self, chat: ChatRef, user_id: int) -> bool:
        """Whether a person who wrote to the bot is in a channel or supergroup the bot is in (channels.getParticipant:
        the bot must administer a broadcast channel to see its members). A person who left or was banned is not."""
        with mapped_errors():
            try:
                found = await self._client(
                    functions.channels.GetParticipantRequest(
                        channel=types.PeerChannel(chat.id), participant=await self._client.get_input_entity(user_id)
                    )
                )
            except errors.UserNotParticipantError:
                return False
        return not isinstance(found.participant, types.ChannelParticipantLeft | types.ChannelParticipantBanned)
