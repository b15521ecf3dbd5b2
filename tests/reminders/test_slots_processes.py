"""Every schedule slot fires exactly once, with real beat and worker processes on a per-minute crontab: beat
killed right after a slot fired and started again, two beats at once, one slot's fire task delivered three
times, Redis down across a slot, and PostgreSQL gone from the worker when the slot's task comes. Each slot has
one run, each group each run's part once (the sandbox's own record), and a slot nothing could fire is caught up.

Slow by nature: each test waits for real minutes to turn (two beats: three slots).
"""

import re
import socket
import time
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.db.models import Count

from config.devstack import EmbeddedRedis
from core import task_names
from core.models import RunStatus
from reminders.models import ReminderRun, ReminderRunTarget, RunTrigger
from tests.support.processes import Gate, purge_queues, start_beat, start_celery_worker, stop, wait_for
from tests.support.reminders import SENDER, groups_world, make_reminder

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

GROUPS = 3


@pytest.fixture
def world(fanout_world):
    return fanout_world(groups_world(groups=GROUPS))


def scheduled(crontab: str):
    """A reminder on `crontab`, all day, made well before a minute turns so no slot is due before it."""
    second = datetime.now(UTC).second
    if second > 45:
        time.sleep(61 - second)
    return make_reminder(schedule_crontab=crontab)


@pytest.fixture
def every_minute(world):
    return scheduled("* * * * *")


def minute_of(moment: datetime) -> datetime:
    return moment.replace(second=0, microsecond=0)


def wait_until_slot(slot: datetime, *, after_seconds: float = 0) -> None:
    time.sleep(max(0.0, (slot - datetime.now(UTC)).total_seconds() + after_seconds))


def runs_by_slot(reminder) -> dict[datetime, int]:
    rows = ReminderRun.objects.filter(reminder=reminder).values("slot").annotate(runs=Count("pk"))
    return {row["slot"]: row["runs"] for row in rows}


def assert_each_group_got_each_run_once(world, reminder) -> None:
    runs = ReminderRun.objects.filter(reminder=reminder, status=RunStatus.SUCCESS)
    for target in ReminderRunTarget.objects.filter(run__in=runs).select_related("chat"):
        posted = [m["random_id"] for m in world.chat_dump(target.chat.telegram_id)["messages"] if m["sender"] == SENDER]
        assert posted.count(target.random_ids[0]) == 1, f"group {target.chat.telegram_id}, run {target.run_id}"
    for chat_id in {t.chat.telegram_id for t in reminder.targets.select_related("chat")}:
        posted = [m for m in world.chat_dump(chat_id)["messages"] if m["sender"] == SENDER]
        assert len(posted) == runs.count(), f"group {chat_id} got {len(posted)} posts for {runs.count()} runs"


def fires(tmp_path, what: str = "received") -> int:
    """Deliveries of the fire task the worker logged as `what` (received, succeeded)."""
    return len(re.findall(rf"reminders\.tasks\.reminder_fire\[[^\]]+\] {what}", (tmp_path / "worker.log").read_text()))


def settle(reminder, *, timeout: float = 60) -> None:
    wait_for(
        lambda: (
            not ReminderRun.objects.filter(reminder=reminder, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]).exists()
        ),
        timeout=timeout,
        what="every run to finish",
    )


def test_beat_killed_right_after_a_slot_fired_and_started_again_fires_it_once(world, every_minute, tmp_path):
    purge_queues()
    worker = start_celery_worker(tmp_path, concurrency=2)
    beat = start_beat(tmp_path)
    try:
        first_slot = minute_of(datetime.now(UTC)) + timedelta(minutes=1)
        run = wait_for(
            lambda: ReminderRun.objects.filter(reminder=every_minute, slot=first_slot).first(),
            timeout=90,
            what="beat to fire the first slot",
        )
        beat.kill()  # SIGKILL: no chance to save its schedule
        beat.wait(timeout=10)
        beat = start_beat(tmp_path, name="beat-again")
        wait_until_slot(first_slot + timedelta(minutes=1), after_seconds=15)
        settle(every_minute)
    finally:
        stop(beat)
        stop(worker)

    slots = runs_by_slot(every_minute)
    assert slots[first_slot] == 1 and run.trigger == RunTrigger.SCHEDULE
    assert slots.get(first_slot + timedelta(minutes=1)) == 1, "the restarted beat fires the next slot"
    assert set(slots.values()) == {1}, slots
    assert fires(tmp_path) > len(slots), "the restarted beat fired the slot again (it had not saved its progress)"
    assert_each_group_got_each_run_once(world, every_minute)


def test_two_beats_across_three_per_minute_slots_give_one_run_each(world, every_minute, tmp_path):
    purge_queues()
    worker = start_celery_worker(tmp_path, concurrency=2)
    beats = [start_beat(tmp_path, name="beat-1"), start_beat(tmp_path, name="beat-2")]
    first_slot = minute_of(datetime.now(UTC)) + timedelta(minutes=1)
    try:
        wait_until_slot(first_slot + timedelta(minutes=2), after_seconds=20)
        settle(every_minute)
    finally:
        for beat in beats:
            stop(beat)
        stop(worker)

    slots = runs_by_slot(every_minute)
    expected = [first_slot + timedelta(minutes=n) for n in range(3)]
    assert [slots.get(slot) for slot in expected] == [1, 1, 1], slots
    assert set(slots.values()) == {1}, slots
    assert fires(tmp_path) >= 2 * len(expected), "both beats fired every slot"
    assert_each_group_got_each_run_once(world, every_minute)


def test_one_slots_fire_task_delivered_three_times_makes_one_run(world, every_minute, tmp_path):
    from config.celery_app import app

    purge_queues()
    worker = start_celery_worker(tmp_path, concurrency=3)
    try:
        # the first slot of the reminder: the minute it was made in was due before it existed
        wait_until_slot(minute_of(datetime.now(UTC)) + timedelta(minutes=1), after_seconds=2)
        for _ in range(3):  # what a redelivery, a restarted beat and a second beat each send
            app.send_task(task_names.REMINDER_FIRE, args=[every_minute.pk])
        wait_for(lambda: fires(tmp_path, "succeeded") >= 3, timeout=90, what="the three deliveries to finish")
        settle(every_minute)
    finally:
        stop(worker)

    slots = runs_by_slot(every_minute)
    assert list(slots.values()) == [1], slots
    run = ReminderRun.objects.get(reminder=every_minute)
    assert (run.status, run.sent) == (RunStatus.SUCCESS, GROUPS)
    assert_each_group_got_each_run_once(world, every_minute)


def test_redis_down_across_a_slot_is_caught_up_when_it_returns(world, tmp_path):
    # every two minutes: the catch-up (each minute) comes round before a later slot supersedes the one missed
    reminder = scheduled("*/2 * * * *")
    redis = EmbeddedRedis(tmp_path / "redis", port=free_port())
    redis.start()
    broker = {"TEST_REDIS_URL": redis.url}
    worker = start_celery_worker(tmp_path, concurrency=2, **broker)
    beat = start_beat(tmp_path, **broker)
    try:
        now = minute_of(datetime.now(UTC))
        first_slot = now + timedelta(minutes=2 - now.minute % 2)
        wait_for(
            lambda: ReminderRun.objects.filter(reminder=reminder, slot=first_slot).exists(),
            timeout=180,
            what="the first slot, with Redis up",
        )
        down_slot = first_slot + timedelta(minutes=2)
        wait_until_slot(down_slot, after_seconds=-10)
        redis.stop()
        wait_until_slot(down_slot, after_seconds=20)
        assert not ReminderRun.objects.filter(reminder=reminder, slot=down_slot).exists(), "nothing could fire"
        redis.start()
        caught = wait_for(
            lambda: ReminderRun.objects.filter(reminder=reminder, slot=down_slot).first(),
            timeout=100,
            what="the slot Redis was down for",
        )
        wait_until_slot(down_slot + timedelta(minutes=1), after_seconds=30)
        settle(reminder, timeout=90)
    finally:
        stop(beat)
        stop(worker)
        redis.stop()

    slots = runs_by_slot(reminder)
    assert set(slots.values()) == {1}, slots
    assert caught.fired_at > down_slot + timedelta(seconds=20), "served late, once Redis was back"
    caught.refresh_from_db()
    assert (caught.status, caught.sent) == (RunStatus.SUCCESS, GROUPS)
    assert_each_group_got_each_run_once(world, reminder)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_fire_task_meeting_a_database_outage_retries_and_serves_the_slot_it_was_sent_for(
    world, every_minute, tmp_path
):
    from config.celery_app import app

    database = connection.settings_dict
    gate = Gate((database["HOST"], int(database["PORT"])))
    through_gate = f"postgres://{database['USER']}@127.0.0.1:{gate.port}/{database['NAME']}"
    purge_queues()
    worker = start_celery_worker(tmp_path, concurrency=2, DATABASE_URL=through_gate)
    try:
        wait_for(lambda: "ready." in (tmp_path / "worker.log").read_text(), timeout=60, what="the worker")
        slot = minute_of(datetime.now(UTC)) + timedelta(minutes=1)
        wait_until_slot(slot, after_seconds=40)
        gate.close()  # PostgreSQL is gone for the worker, 40 s into the slot's minute
        app.send_task(task_names.REMINDER_FIRE, args=[every_minute.pk])
        wait_for(lambda: fires(tmp_path, "retry") >= 2, timeout=60, what="the fire task to retry")
        wait_until_slot(slot + timedelta(minutes=1), after_seconds=5)  # the next minute has begun
        gate.open()
        run = wait_for(
            lambda: ReminderRun.objects.filter(reminder=every_minute).first(), timeout=90, what="the run, once back"
        )
        settle(every_minute)
    finally:
        stop(worker)
        gate.close()

    assert run.slot == slot, "the slot the task was sent for, not the minute it finally ran in"
    assert run.fired_at > slot + timedelta(minutes=1)
    assert list(runs_by_slot(every_minute).values()) == [1]
    assert "OperationalError" in (tmp_path / "worker.log").read_text()
    assert_each_group_got_each_run_once(world, every_minute)
