"""Reminders in tests: a world of groups, reminders made as the services make them, runs worked in this
process, and what the sandbox saw posted."""

import struct
import zlib
from datetime import UTC, datetime

from django.core.files.base import ContentFile

from accounts.models import Chat, TelegramAccount
from reminders import fanout
from reminders.models import ReminderRun
from reminders.services import PartSpec, ReminderSpec, TargetSpec, media_create, reminder_create

SENDER = "+15550000101"
SENDER_B = "+15550000102"
GROUP_BASE = 700_000
KL = "Asia/Kuala_Lumpur"
# 10:00 in Kuala Lumpur (UTC+8, no DST): inside a 09:00–18:00 window that closes at 10:00 UTC.
KL_MORNING = datetime(2026, 11, 25, 2, 0, tzinfo=UTC)
KL_AFTER_CLOSE = datetime(2026, 11, 25, 10, 0, 1, tzinfo=UTC)
KL_NEXT_MORNING = datetime(2026, 11, 26, 1, 30, tzinfo=UTC)


def group_id(n: int) -> int:
    return GROUP_BASE + n


def groups_world(*, groups: int = 5, accounts=(SENDER,), slow_mode: int = 0, faults=(), forum: bool = False) -> dict:
    """`groups` supergroups every account is a member of (members may post)."""
    return {
        "accounts": [
            {"phone": phone, "first_name": f"Sender {n}", "code": "12345"} for n, phone in enumerate(accounts)
        ],
        "chats": [
            {
                "id": group_id(n),
                "title": f"Group {n:04d}",
                "type": "supergroup",
                "forum": forum,
                "topics": [{"id": 7, "title": "News"}] if forum else [],
                "members": list(accounts),
                "slow_mode_seconds": slow_mode,
            }
            for n in range(groups)
        ],
        "faults": list(faults),
    }


def png_bytes(seed: int = 0, size: int = 8) -> bytes:
    """A small valid PNG (solid colour), different per seed."""
    raw = b"".join(b"\x00" + bytes([seed % 256, 80, 160]) * size for _ in range(size))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def account(phone: str = SENDER) -> TelegramAccount:
    return TelegramAccount.objects.get(phone=phone)


def image(seed: int = 0):
    return media_create(file=ContentFile(png_bytes(seed), name=f"promo-{seed}.png"), name=f"promo-{seed}.png")


def make_reminder(
    *,
    phone: str = SENDER,
    groups: int | None = None,
    chats=None,
    parts=None,
    timezone: str = "UTC",
    start: int = 0,
    end: int = 24,
    **fields,
):
    sender = account(phone)
    if chats is None:
        chats = Chat.objects.filter(account_links__account=sender).order_by("telegram_id")
        chats = list(chats[:groups] if groups is not None else chats)
    spec = ReminderSpec(
        account=sender,
        name=fields.pop("name", "Weekly promo"),
        timezone=timezone,
        window_start_hour=start,
        window_end_hour=end,
        parts=parts or [PartSpec(text="Hello groups")],
        targets=[TargetSpec(chat=chat) for chat in chats],
        **fields,
    )
    return reminder_create(spec=spec)


def execute(run: ReminderRun) -> ReminderRun:
    """What the Celery task does, in this process."""
    fanout.reminder_run_execute(run_id=run.pk)
    run.refresh_from_db()
    return run


def paused_run(at, *, name: str = "Flash sale", sent: int = 4) -> ReminderRun:
    """A real run of a 09:00–18:00 Kuala Lumpur reminder to every group, paused by its window after `sent`
    groups; the clock is then the next morning, inside the window again."""
    from reminders.services import reminder_fire

    reminder = make_reminder(name=name, timezone=KL, start=9, end=18)
    at(KL_MORNING)
    run = reminder_fire(reminder=reminder)
    at(KL_MORNING, then=KL_AFTER_CLOSE, after=sent)
    run = execute(run)
    at(KL_NEXT_MORNING)
    return run


def posts(world, chat_id: int, phone: str = SENDER) -> list[dict]:
    """What `phone` posted in a chat, from the sandbox (the `sandbox_dump` format)."""
    return [message for message in world.chat_dump(chat_id)["messages"] if message["sender"] == phone]
