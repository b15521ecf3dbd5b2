"""Reminders for the demo world of `make run`: a weekly announcement with a picture, and a flash sale
whose run of last night hit the end of its delivery window and waits for Resume."""

import struct
import zlib
from datetime import UTC, datetime, time, timedelta
from itertools import count

from django.core.files.base import ContentFile
from django.core.management.base import BaseCommand
from django.utils import timezone

from accounts.models import AccountChat, AuthState
from core import clock
from reminders import fanout
from reminders.models import Reminder
from reminders.services import PartSpec, ReminderSpec, TargetSpec, media_create, reminder_create, reminder_fire

GROUP_TYPES = ("group", "supergroup")


def banner_png(width: int = 240, height: int = 120) -> bytes:
    """A small gradient picture, made here so the demo needs no binary file."""
    rows = b"".join(
        b"\x00" + b"".join(bytes([40 + x // 2, 60 + y, 200 - x // 3]) for x in range(width)) for y in range(height)
    )

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


class Command(BaseCommand):
    help = "Create the demo reminders (once): a weekly announcement and a paused flash-sale run."

    def handle(self, *args, **options):
        if Reminder.objects.exists():
            self.stdout.write("  Reminders exist already; no demo reminders added.")
            return
        links = AccountChat.objects.filter(
            can_post=True, chat__type__in=GROUP_TYPES, account__auth_state=AuthState.AUTHENTICATED
        ).select_related("account", "chat")
        by_account = {}
        for link in links:
            by_account.setdefault(link.account, []).append(link.chat)
        if not by_account:
            self.stdout.write("  No logged-in account can post in a group; no demo reminders added.")
            return
        account, groups = max(by_account.items(), key=lambda item: len(item[1]))
        targets = [TargetSpec(chat=chat) for chat in sorted(groups, key=lambda chat: chat.title)]
        picture = media_create(file=ContentFile(banner_png(), name="weekly-drop.png"), name="weekly-drop.png")
        reminder_create(
            spec=ReminderSpec(
                account=account,
                name="Weekly drop announcement",
                timezone="Asia/Kuala_Lumpur",
                window_start_hour=9,
                window_end_hour=18,
                parts=[
                    PartSpec(text="New models are in the vault this Friday: dragons, terrain and a rover."),
                    PartSpec(media=picture, caption="This week's drop"),
                ],
                targets=targets,
                schedule_crontab="0 10 * * 5",
            )
        )
        flash = reminder_create(
            spec=ReminderSpec(
                account=account,
                name="Flash sale",
                timezone="UTC",
                window_start_hour=0,
                window_end_hour=24,
                parts=[PartSpec(text="Flash sale: 30% off every resin kit until midnight.")],
                targets=targets,
            )
        )
        run = self._replay_last_night(flash)
        self.stdout.write(
            f"  Demo reminders added; the flash sale's run is {run.status}: {run.sent} of {run.total} groups."
        )

    def _replay_last_night(self, reminder: Reminder):
        """Send it as it went last night: fired at 23:59, midnight closed the window after a few groups."""
        midnight = datetime.combine(timezone.now().date(), time.min, tzinfo=UTC)
        late, after = midnight - timedelta(minutes=1), midnight + timedelta(seconds=30)
        readings = count()
        real_now = clock.now
        clock.now = lambda: late if next(readings) < 8 else after
        try:
            run = reminder_fire(reminder=reminder, enqueue=False)
            fanout.reminder_run_execute(run_id=run.pk)
        finally:
            clock.now = real_now
        run.refresh_from_db()
        return run
