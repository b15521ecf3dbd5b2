"""The bot process's loop: log in with the token, answer what people say and press, send packages paced inside
the Bot API's limits, and tell subscribers about packages that landed. Every decision is commands.py's and
services.py's (run on the database thread); this module only talks to Telegram."""

import asyncio
import contextlib
import logging

from django.conf import settings

from core.audit import audit_bot_scope
from core.db_thread import in_db_thread
from packages.bot import commands, services
from packages.bot.commands import Answer, Reply
from telegram.errors import TelegramError
from telegram.gateway import open_bot
from telegram.records import ChatRef

log = logging.getLogger(__name__)
NOTICE_SHOWN = 10  # packages listed in one notice message


class Pacer:
    """Sends spaced to stay inside the Bot API's limits: `per_second` messages overall, and one per
    `person_gap` seconds to any one person (docs/decisions/0122-*.md)."""

    def __init__(self, *, per_second: int, person_gap: float):
        self._gap = 1 / per_second
        self._person_gap = person_gap
        self._next_any = 0.0
        self._next_person: dict[int, float] = {}

    async def wait(self, user_id: int) -> None:
        now = asyncio.get_running_loop().time()
        slot = max(now, self._next_any, self._next_person.get(user_id, 0.0))
        self._next_any = slot + self._gap
        self._next_person[user_id] = slot + self._person_gap
        if slot > now:
            await asyncio.sleep(slot - now)


class BotLoop:
    def __init__(self, bot):
        self.bot = bot
        self.pacer = Pacer(
            per_second=settings.BOT_SENDS_PER_SECOND, person_gap=settings.BOT_PERSON_SECONDS_BETWEEN_SENDS
        )

    async def say(self, user_id: int, reply: Reply) -> None:
        await self.pacer.wait(user_id)
        if reply.picture is not None:
            await self.bot.send_picture(user_id, reply.picture, caption=reply.text, buttons=reply.buttons)
        elif reply.edit_message_id is not None:
            await self.bot.edit_text(user_id, reply.edit_message_id, reply.text, buttons=reply.buttons)
        else:
            await self.bot.send_text(user_id, reply.text, buttons=reply.buttons)

    async def perform(self, user_id: int, answer: Answer) -> None:
        for reply in answer.replies:
            await self.say(user_id, reply)
        for delivery in answer.deliveries:
            sent, error = [], ""
            try:
                for chat, message_id, caption in delivery.messages:
                    await self.pacer.wait(user_id)
                    sent.append(await self.bot.send_copy(user_id, chat, message_id, caption=caption))
            except TelegramError as exc:
                error = str(exc)
            await in_db_thread(services.bot_delivery_done)(delivery_id=delivery.id, message_ids=sent, error=error)
            if error:
                await self.say(user_id, Reply(f"{delivery.title} could not be sent: {error}"))

    async def _membership(self, person):
        """Ask Telegram whether the person is in one of the chosen chats (when the last answer is stale)."""
        due = await in_db_thread(services.bot_membership_due)(person=person)
        if not due:
            return person
        found, answered = None, True
        for chat in due:
            try:
                if await self.bot.is_member(ChatRef(id=chat.telegram_id, type=chat.type), person.user_id):
                    found = chat
                    break
            except TelegramError as exc:
                answered = False
                text = f"could not check members of {chat.title} (make the bot an admin of it): {exc}"
                await in_db_thread(services.bot_activity_add)(person=person, kind="check", text=text)
        return await in_db_thread(services.bot_membership_record)(person=person, chat=found, answered=answered)

    async def _person(self, user_id: int, first_name: str = "", username: str = ""):
        person = await in_db_thread(services.bot_person_seen)(user_id=user_id, first_name=first_name, username=username)
        person = await self._membership(person)
        refusal = await in_db_thread(services.bot_refusal)(person=person)
        if refusal:
            await in_db_thread(services.bot_activity_add)(person=person, kind="refused", text=refusal)
        return person, refusal

    async def on_message(self, message) -> None:
        who = f"@{message.username}, {message.user_id}" if message.username else str(message.user_id)
        async with audit_bot_scope(action=f"answered {message.first_name} ({who})"):
            await self._answer_message(message)

    async def _answer_message(self, message) -> None:
        try:
            person, refusal = await self._person(message.user_id, message.first_name, message.username)
            claim = in_db_thread(services.bot_message_claim)
            if not await claim(user_id=message.user_id, message_id=message.message_id):
                return  # taken up before a crash, caught up again
            if refusal:
                answer = await in_db_thread(commands.answer_refused)(person=person, text=message.text, refusal=refusal)
            else:
                answer = await in_db_thread(commands.answer_message)(person=person, text=message.text)
            await self.perform(message.user_id, answer)
        except TelegramError as exc:
            log.warning("The bot could not answer %s: %s", message.user_id, exc)

    async def on_press(self, press) -> None:
        async with audit_bot_scope(action=f"answered a button pressed by {press.user_id}"):
            await self._answer_press(press)

    async def _answer_press(self, press) -> None:
        try:
            person, refusal = await self._person(press.user_id)
            if refusal:
                await self.bot.answer_press(press.query_id, refusal)
                return
            answer = await in_db_thread(commands.answer_press)(
                person=person, message_id=press.message_id, data=press.data
            )
            await self.bot.answer_press(press.query_id, answer.press_text)
            await self.perform(press.user_id, answer)
        except TelegramError as exc:
            log.warning("The bot could not answer a press of %s: %s", press.user_id, exc)

    async def _allowed_now(self, user_id: int) -> bool:
        """Whether the bot's rules let this person in at this moment (membership asked again when stale)."""
        person = await in_db_thread(services.bot_person_get)(user_id=user_id)
        if person is None:
            return False
        person = await self._membership(person)
        return not await in_db_thread(services.bot_refusal)(person=person)

    async def tell_subscribers(self) -> None:
        async with audit_bot_scope(action="told subscribers of new packages"):
            await self._tell_subscribers()

    async def _tell_subscribers(self) -> None:
        for notice in await in_db_thread(services.bot_notices_due)():
            try:
                allowed = await self._allowed_now(notice.user_id)
            except TelegramError as exc:
                log.warning("The bot could not check %s before a notice: %s", notice.user_id, exc)
                allowed = False
            if not allowed:
                await in_db_thread(services.bot_notice_withheld)(notice=notice)
                continue
            count = len(notice.packages)
            words = ", ".join(f"“{w}”" for w in notice.words)
            text = f"{count} new package{'s' if count > 1 else ''} for {words}:"
            buttons = [[(f"{name[:40]}", f"p:{pk}".encode())] for pk, name, _ in notice.packages[:NOTICE_SHOWN]]
            try:
                await self.say(notice.user_id, Reply(text, buttons))
            except TelegramError as exc:
                log.warning("The bot could not tell %s about new packages: %s", notice.user_id, exc)
                continue
            await in_db_thread(services.bot_notice_told)(notice=notice)


async def bot_run(*, token: str, stop: asyncio.Event, started: asyncio.Event | None = None) -> None:
    """Run the bot until `stop` is set, or until an operator turns it off (checked with each notice round)."""
    kept = await in_db_thread(services.bot_session_get)(token=token)
    async with open_bot(token=token, session=kept.session, update_state=kept.update_state) as bot:
        await in_db_thread(services.bot_username_set)(username=bot.username)
        await in_db_thread(services.bot_session_keep)(bot_id=bot.user_id, session=bot.session)
        loop = BotLoop(bot)
        bot.on_message(loop.on_message)
        bot.on_press(loop.on_press)
        log.info("The bot @%s is answering.", bot.username)

        async def notices() -> None:
            while not stop.is_set():
                if not (await in_db_thread(services.bot_settings_get)()).enabled:
                    stop.set()
                    return
                await loop.tell_subscribers()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), settings.BOT_NOTICE_SECONDS)

        if started is not None:
            started.set()
        telling = asyncio.create_task(notices())
        try:
            await bot.run(stop)
        finally:
            telling.cancel()
    # Left the block: the client has disconnected and written down where its updates stopped.
    await in_db_thread(services.bot_session_keep)(
        bot_id=bot.user_id, session=bot.session, update_state=bot.update_state
    )
