"""Send me a test: the reminder's parts at once to the account's own Saved Messages (or one of its chats).

The parts go exactly as groups get them (fanout.part_build / part_send), through the account's session lease,
outside the delivery window and the run accounting: no run, no token of the send budget taken, no send counted.
It still yields to the account: a rest, a stop or a FloodWait holding its budget refuses the test in words, and a
FloodWait Telegram answers the test with holds the account's budget for every run and package send too.
"""

import logging
import math
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from accounts import pace
from accounts.models import AccountChat
from accounts.services import gateway_call
from core import clock
from core.errors import OperatorError
from core.ratelimit import BucketUnavailable
from reminders.fanout import Part, media_local_path, part_build, part_send
from reminders.models import MediaFile, Reminder
from reminders.schedule import DeliveryWindow, zone
from reminders.services import ReminderStateError
from reminders.services.runs import random_id_new, run_account_problem
from telegram.errors import FloodWait, SessionInUse, TelegramError
from telegram.formatting import FormatError
from telegram.gateway import TelegramGateway
from telegram.records import SAVED_MESSAGES, ChatRef

logger = logging.getLogger(__name__)

SAVED_MESSAGES_NAME = "Saved Messages"


class NotTheAccountsChat(OperatorError):
    """The chat asked for is not one of the account's."""

    status = 400


@dataclass(frozen=True)
class SentTest:
    where: str  # "Saved Messages", or the chat's title
    at: datetime
    messages: int
    zone_name: str = "UTC"  # the reminder's time zone, in which the time is said
    closed_window: str = ""  # the delivery window, when the test went out while it was closed

    @property
    def summary(self) -> str:
        at = f"{self.at.astimezone(zone(self.zone_name)):%H:%M} ({self.zone_name})"
        if self.closed_window:
            return (
                f"Sent to {self.where} at {at}, outside the delivery window {self.closed_window}: a test goes out at "
                "any hour, and counts in no run."
            )
        return f"Sent to {self.where} at {at}. A test counts in no run."


def reminder_test_send(*, reminder: Reminder, chat: int | None = None) -> SentTest:
    """Send the reminder's parts now to Saved Messages, or to `chat` (the Telegram id of one of the account's
    chats). Refuses (ReminderStateError) when the account may not send now; NotTheAccountsChat for another chat."""
    account = reminder.account
    ref, where = SAVED_MESSAGES, SAVED_MESSAGES_NAME
    if chat is not None:
        link = AccountChat.objects.select_related("chat").filter(account=account, chat__telegram_id=chat).first()
        if link is None:
            raise NotTheAccountsChat(
                f"{account} is not in chat {chat}; pick one of its chats, or none for Saved Messages.", field="chat"
            )
        ref, where = link.ref, f"“{link.chat.title}”"
    stored = list(reminder.parts.order_by("order").values("text", "media_id", "caption", "format", "album"))
    if not stored:
        raise ReminderStateError(f"“{reminder}” has no parts to send.")
    account.refresh_from_db()
    problem = run_account_problem(account)
    if problem:
        raise ReminderStateError(f"No test sent: {problem}")
    held = _budget_held(account)
    if held:
        raise ReminderStateError(f"No test sent: {held}")
    media_ids = {media_id for part in stored for media_id in [part["media_id"], *part["album"]] if media_id}
    media = MediaFile.objects.in_bulk(media_ids)
    try:
        parts = [
            part_build(part={**part, "media": part["media_id"]}, media=media, premium=account.is_premium)
            for part in stored
        ]
    except FormatError as exc:
        raise ReminderStateError(f"No test sent: {exc}") from exc
    options = {"silent": reminder.silent, "link_preview": reminder.link_preview}
    with tempfile.TemporaryDirectory(prefix=f"reminder-test-{reminder.pk}-") as temp_dir:
        paths = {pk: media_local_path(media=item, temp_dir=Path(temp_dir)) for pk, item in media.items()}

        async def send(gateway: TelegramGateway) -> int:
            return await _parts_send(gateway, ref, parts, paths, options)

        try:
            messages, _ = gateway_call(account=account, action=send)
        except SessionInUse as exc:
            raise ReminderStateError(f"No test sent: {account} is busy with another process; try again.") from exc
        except FloodWait as exc:
            _hold_budget(account, exc.seconds)
            raise ReminderStateError(
                f"No test sent: Telegram asked {account} to wait {exc.seconds} s ({exc.rpc}); its runs wait too."
            ) from exc
        except TelegramError as exc:
            raise ReminderStateError(f"No test sent: Telegram refused it ({exc}).") from exc
    now = clock.now()
    window = DeliveryWindow.of(reminder)
    closed = "" if window.containing(now) is not None else window.text
    sent = SentTest(where=where, at=now, messages=messages, zone_name=reminder.timezone, closed_window=closed)
    logger.info("Reminder #%s: test sent to %s by %s (%s messages)", reminder.pk, where, account, messages)
    return sent


async def _parts_send(
    gateway: TelegramGateway, ref: ChatRef, parts: list[Part], paths: dict[int, str], options: dict
) -> int:
    handles = {}

    async def handle(item: MediaFile):
        if item.pk not in handles:
            handles[item.pk] = await gateway.upload_media(
                path=paths[item.pk], file_name=item.name, mime_type=item.mime_type
            )
        return handles[item.pk]

    messages = 0
    for part in parts:
        media = await handle(part.media) if part.media else None
        album = [await handle(item) for item in part.album]
        sent = await part_send(
            gateway, ref, part, random_id=random_id_new(), media=media, album=album, topic_id=None, options=options
        )
        messages += 1 + len(sent.album_ids)
    return messages


def _budget_held(account) -> str:
    """Why the account's budget holds every send now (a FloodWait), or ""; the pacing of a run in progress does
    not hold a test (it takes no token)."""
    try:
        state = pace.account_bucket(account=account).state()
    except BucketUnavailable:
        return "the send budget (Redis) does not answer; try again in a minute."
    if state.wait > 0:
        return f"a FloodWait holds {account} for {math.ceil(state.wait)} s more; try again after."
    return ""


def _hold_budget(account, seconds: int) -> None:
    try:
        pace.account_bucket(account=account).pause(seconds)
    except BucketUnavailable:
        logger.warning("The FloodWait of %s after a test send could not be kept in the budget", account)
