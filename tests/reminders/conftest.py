import itertools
import struct
import zlib
from datetime import UTC, datetime

import pytest
import redis
from django.conf import settings as django_settings
from django.contrib.auth.models import Group
from django.core.files.base import ContentFile

from accounts.models import Chat, TelegramAccount
from core import clock
from core.ratelimit import KEY_PREFIX
from core.roles import OPERATORS_GROUP
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


@pytest.fixture(autouse=True)
def fast_pace(settings, tmp_path):
    """A time-scaled budget: the rules are the same, the minute is shorter."""
    settings.REMINDER_MAX_SEND_PER_MINUTE = 6000
    settings.REMINDER_SEND_BURST = 3
    settings.REMINDER_PART_JITTER_MIN_MS = 0
    settings.REMINDER_PART_JITTER_MAX_MS = 2
    settings.MEDIA_ROOT = tmp_path / "media"


def buckets_forget() -> None:
    """Drop every send bucket from Redis: what a day later looks like to a FloodWait's pause (Redis keeps time)."""
    client = redis.Redis.from_url(django_settings.REDIS_URL)
    keys = list(client.scan_iter(f"{KEY_PREFIX}*"))
    if keys:
        client.delete(*keys)


@pytest.fixture(autouse=True)
def fresh_buckets():
    """Accounts get new ids in every test, but a bucket left by an earlier run of the suite may share one."""
    buckets_forget()


@pytest.fixture
def fanout_world(sandbox):
    """Load a world and log its accounts in, as `sandbox_load --authorize` does."""
    from operations.sandbox import sandbox_authorize

    def load(data: dict):
        world = sandbox(data)
        sandbox_authorize()
        return world

    return load


@pytest.fixture
def operator(client, django_user_model):
    """The test client, logged in as a member of the Operators group."""
    user = django_user_model.objects.create_user(username="operator", password="s3cret-pass")
    user.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    client.force_login(user)
    return client


@pytest.fixture
def at(monkeypatch):
    """Set the project's clock: at(datetime) fixes it; at(first, then=..., after=n) switches after n readings."""

    def set_clock(moment: datetime, *, then: datetime | None = None, after: int = 0):
        readings = itertools.count()
        monkeypatch.setattr(clock, "now", lambda: moment if then is None or next(readings) < after else then)

    return set_clock


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


@pytest.fixture
def enqueued(monkeypatch) -> list[int]:
    """Runs the services queue (resume, fire); the test runs them itself instead of a Celery worker."""
    from reminders.services import runs as run_services

    queued = []
    monkeypatch.setattr(run_services, "reminder_run_enqueue", queued.append)
    return queued


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
