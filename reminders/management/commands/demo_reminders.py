"""Reminders for the demo world of `make run`: a weekly announcement with a picture, and a flash sale
whose run of yesterday hit the end of its three-hour delivery window and waits for Resume, which works at
once: the window is open again now."""

import struct
import zlib
from datetime import timedelta
from itertools import count

from django.core.files.base import ContentFile
from django.core.management.base import BaseCommand
from django.utils import timezone

from accounts.models import AccountChat, AuthState
from core import clock
from reminders import fanout
from reminders.models import Reminder
from reminders.schedule import DeliveryWindow
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
        # A window from an hour ago to two hours ahead (wrapping past midnight as an overnight window does).
        hour = timezone.now().hour
        flash = reminder_create(
            spec=ReminderSpec(
                account=account,
                name="Flash sale",
                timezone="UTC",
                window_start_hour=(hour - 1) % 24,
                window_end_hour=(hour + 1) % 24 + 1,
                parts=[PartSpec(text="Flash sale: 30% off every resin kit, three hours only.")],
                targets=targets,
            )
        )
        run = self._replay_yesterday(flash)
        self.stdout.write(
            f"  Demo reminders added; the flash sale's run is {run.status}: {run.sent} of {run.total} groups."
        )

    def _replay_yesterday(self, reminder: Reminder):
        """Send it as it went yesterday: fired a minute before its window closed, which closed after a few
        groups."""
        window = DeliveryWindow.of(reminder)
        yesterday = window.containing(timezone.now() - timedelta(days=1))
        late, after = yesterday.end_at - timedelta(minutes=1), yesterday.end_at + timedelta(seconds=30)
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
