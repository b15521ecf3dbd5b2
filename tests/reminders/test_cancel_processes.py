"""Cancel and Pause mean now: a run asleep in a wait (here a group's slow mode) in a real Celery worker stops
within 2 s, the account's next run starts at once, and the page, the CSV and the API tell one story."""

import csv
import io
import os
import signal
import time

import pytest
from django.utils import timezone

from core.models import RunStatus
from reminders.models import ReminderRun, TargetStatus
from reminders.services import PartSpec, reminder_fire, reminder_run_cancel, reminder_run_pause
from tests.support.processes import purge_queues, send_times, start_celery_worker, wait_for
from tests.support.reminders import account, group_id, groups_world, image, make_reminder

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

SLOW_MODE = 30  # far longer than the test waits: only an interrupted wait ends in time


def _world() -> dict:
    """Groups 0 and 1 in slow mode (the first run's), 2 and 3 without (the next run's)."""
    world = groups_world(groups=4)
    for chat in world["chats"][:2]:
        chat["slow_mode_seconds"] = SLOW_MODE
    return world


def _asleep_in_slow_mode(world, stop):
    """Fire a run of a text and a two-picture album to groups 0 and 1, wait until both groups got the text (the
    album now waits out their slow mode), then `stop` it; returns the run and when it was stopped."""
    chats = list(account().chats.order_by("telegram_id"))
    reminder = make_reminder(
        chats=chats[:2], parts=[PartSpec(text="Doors open at nine"), PartSpec(album=(image(1), image(2)), caption="")]
    )
    run = reminder_fire(reminder=reminder)
    wait_for(lambda: len(send_times(world, range(2))) >= 2, timeout=60, what="the first part in both groups")
    time.sleep(1)  # asleep in the slow mode of both groups
    assert ReminderRun.objects.get(pk=run.pk).status == RunStatus.RUNNING
    stopped_at = timezone.now()
    stop(run=run)
    return run, stopped_at


def _next_run_starts_at_once(chats, stopped_at) -> ReminderRun:
    """The operator sends the account's next run right away: it is claimed within 2 s, not after a retry."""
    following = reminder_fire(reminder=make_reminder(chats=chats, name="Next one", parts=[PartSpec(text="Hi")]))
    following = wait_for(
        lambda: ReminderRun.objects.filter(pk=following.pk, status=RunStatus.SUCCESS).first(), timeout=30, what="next"
    )
    assert (following.claimed_at - stopped_at).total_seconds() < 2, "the next run waited behind the stopped one"
    return following


@pytest.fixture
def worker(tmp_path, settings):
    settings.MEDIA_ROOT = tmp_path / "media"
    purge_queues()
    # Two pool processes: the next run's task reaches one while the stopped run may still hold the account.
    process = start_celery_worker(tmp_path, concurrency=2)
    yield process
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=30)


def test_cancel_in_a_slow_mode_wait_ends_the_task_at_once_and_the_next_run_starts(fanout_world, worker, operator, api):
    world = fanout_world(_world())
    run, canceled_at = _asleep_in_slow_mode(world, reminder_run_cancel)

    _next_run_starts_at_once(list(account().chats.order_by("telegram_id"))[2:], canceled_at)

    assert len(send_times(world, range(2))) == 2, "no album went out after Cancel"
    run = ReminderRun.objects.get(pk=run.pk)
    assert (run.status, run.sent, run.skipped, run.pending) == (RunStatus.PARTIAL, 0, 2, 0)
    assert run.error_summary == "Canceled by operator: 0 of 2 groups delivered, 2 skipped (2 of them part-way)."
    targets = list(run.targets.order_by("pk"))
    assert [(t.status, t.parts_sent, t.parts_total) for t in targets] == [(TargetStatus.SKIPPED, 1, 2)] * 2

    page = operator.get(f"/activity/runs/{run.pk}/").content.decode()
    assert 'class="badge target--sending"' not in page and 'class="badge target--pending"' not in page
    assert page.count('class="badge target--skipped"') == 2
    assert page.count("1 of 2 parts") == 2
    assert run.error_summary in page
    assert "<strong>0</strong> sent" in page and "<strong>2</strong> skipped" in page

    report = list(csv.DictReader(io.StringIO(operator.get(f"/activity/runs/{run.pk}/report.csv").content.decode())))
    assert [(row["part"], row["status"]) for row in report] == [("1", "sent"), ("2", "skipped")] * 2

    body = api.get(f"/api/reminder-runs/{run.pk}/").json()
    assert (body["sent"], body["skipped"], body["pending"], body["error_summary"]) == (0, 2, 0, run.error_summary)
    rows = api.get(f"/api/reminder-runs/{run.pk}/targets/").json()["results"]
    assert [(row["status"], row["parts_sent"], row["parts_total"]) for row in rows] == [("skipped", 1, 2)] * 2


def test_pause_in_a_slow_mode_wait_stops_at_once_each_group_pending_at_its_album(fanout_world, worker):
    world = fanout_world(_world())
    run, paused_at = _asleep_in_slow_mode(world, reminder_run_pause)

    _next_run_starts_at_once(list(account().chats.order_by("telegram_id"))[2:], paused_at)

    run = ReminderRun.objects.get(pk=run.pk)
    assert (run.status, run.sent, run.pending) == (RunStatus.PAUSED, 0, 2)
    assert [(t.status, t.parts_sent) for t in run.targets.order_by("pk")] == [(TargetStatus.PENDING, 1)] * 2
    assert [len(world.chat_dump(group_id(n))["messages"]) for n in range(2)] == [1, 1]
