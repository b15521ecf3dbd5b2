"""`make run` adds demo reminders to the demo world: one scheduled, and one run paused at the end of yesterday's
window, which Resume sends on today (the window is open again)."""

import io
import re

import pytest
from django.conf import settings
from django.core.management import call_command

from core.models import RunStatus
from reminders import fanout
from reminders.models import Reminder, ReminderRun
from reminders.services import reminder_run_resume

pytestmark = pytest.mark.django_db

DEMO = settings.BASE_DIR / "telegram" / "sandbox" / "worlds" / "demo.json"


@pytest.fixture(autouse=True)
def folders(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.SANDBOX_PATH = tmp_path / "sandbox"
    settings.REMINDER_MAX_SEND_PER_MINUTE = 6000
    settings.REMINDER_PART_JITTER_MIN_MS = settings.REMINDER_PART_JITTER_MAX_MS = 0


def test_demo_reminders_leave_a_paused_run_that_resumes_to_success():
    call_command("sandbox_load", str(DEMO), "--authorize", stdout=io.StringIO())
    out = io.StringIO()

    call_command("demo_reminders", stdout=out)

    assert set(Reminder.objects.values_list("name", flat=True)) == {"Weekly drop announcement", "Flash sale"}
    weekly = Reminder.objects.get(name="Weekly drop announcement")
    assert weekly.periodic_task is not None and weekly.parts.count() == 2
    run = ReminderRun.objects.get()
    assert run.status == RunStatus.PAUSED and 0 < run.sent < run.total, out.getvalue()
    flash = Reminder.objects.get(name="Flash sale")
    closes = f"{flash.window_end_hour % 24:02d}:00"
    assert re.search(rf"Delivery window closed at {closes} on \w{{3}} \d+ \w{{3}} \(UTC\)", run.error_summary)
    assert run.can_resume and flash.auto_resume is False, "it waits for Resume, which works now"

    resumed = reminder_run_resume(run=run)
    fanout.reminder_run_execute(run_id=resumed.pk)
    run.refresh_from_db()
    assert (run.status, run.pending, run.failed, run.sent) == (RunStatus.SUCCESS, 0, 0, run.total)

    call_command("demo_reminders", stdout=out)
    assert Reminder.objects.count() == 2, "added once"
