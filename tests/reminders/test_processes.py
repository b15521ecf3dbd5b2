"""Fan-outs in real OS processes and a real Celery worker, against the test database and one sandbox.

Send times come from the sandbox's own record (`sandbox_dump` dates), so they show what Telegram saw.
"""

import os
import signal
import time

import pytest
from django.conf import settings

from core.models import RunStatus
from reminders.models import ReminderRun
from reminders.services import PartSpec, reminder_fire
from tests.support.processes import (
    BURST,
    PER_MINUTE,
    assert_paced,
    purge_queues,
    run_in_processes,
    send_times,
    start_celery_worker,
    stop,
    wait_for,
)
from tests.support.reminders import (
    SENDER,
    SENDER_B,
    account,
    group_id,
    groups_world,
    image,
    make_reminder,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]


def test_two_processes_on_one_account_send_one_after_the_other_at_one_shared_pace(fanout_world, tmp_path):
    world = fanout_world(groups_world(groups=24))
    chats = list(account().chats.order_by("telegram_id"))
    first = reminder_fire(reminder=make_reminder(chats=chats[:12], name="First"), enqueue=False)
    second = reminder_fire(reminder=make_reminder(chats=chats[12:], name="Second"), enqueue=False)

    reports = run_in_processes(tmp_path, [first], [second])

    assert reports == [{str(first.pk): "success"}, {str(second.pk): "success"}]
    one, two = send_times(world, range(12)), send_times(world, range(12, 24))
    assert len(one) == len(two) == 12
    assert one[-1] < two[0] or two[-1] < one[0], "the account never sent for two runs at once"
    both = sorted(one + two)
    assert_paced(both, rate=PER_MINUTE / 60, capacity=BURST, slack=0.75)
    # A budget of its own would let the second run start BURST tokens early; the first send arriving late by less
    # than one token's interval (a loaded machine) is not one.
    assert both[-1] - both[0] >= (len(both) - BURST - 1) / (PER_MINUTE / 60), (
        "the second run did not get a budget of its own"
    )


@pytest.mark.alone  # two processes started side by side: their overlap is timing
def test_two_accounts_send_in_parallel(fanout_world, tmp_path):
    world = fanout_world(groups_world(groups=24, accounts=(SENDER, SENDER_B)))
    chats = list(account().chats.order_by("telegram_id"))
    runs = [
        reminder_fire(reminder=make_reminder(phone=SENDER, chats=chats[:12], name="A"), enqueue=False),
        reminder_fire(reminder=make_reminder(phone=SENDER_B, chats=chats[12:], name="B"), enqueue=False),
    ]

    reports = run_in_processes(tmp_path, [runs[0]], [runs[1]])

    assert [list(report.values()) for report in reports] == [["success"], ["success"]]
    a, b = send_times(world, range(12), SENDER), send_times(world, range(12, 24), SENDER_B)
    assert len(a) == len(b) == 12
    for times in (a, b):
        assert_paced(times, rate=PER_MINUTE / 60, capacity=BURST, slack=0.75)
    overlap = min(a[-1], b[-1]) - max(a[0], b[0])
    assert overlap > 0.6 * min(a[-1] - a[0], b[-1] - b[0]), "each account has a budget of its own"


@pytest.mark.alone  # a warm shutdown in 30 s
def test_a_worker_killed_mid_run_is_redelivered_and_no_group_gets_a_part_twice(fanout_world, tmp_path):
    world = fanout_world(groups_world(groups=30))
    settings.MEDIA_ROOT = tmp_path / "media"
    reminder = make_reminder(parts=[PartSpec(text="Hello"), PartSpec(media=image(), caption="Flyer")])
    purge_queues()
    worker = start_celery_worker(tmp_path, REMINDER_MAX_SEND_PER_MINUTE="600")
    try:
        run = reminder_fire(reminder=reminder)  # enqueued on commit, to the fanout queue
        wait_for(lambda: len(send_times(world, range(30))) >= 16, timeout=60, what="the first groups")
        run.refresh_from_db()
        child = int(run.worker_id.rsplit("-", 2)[1])
        os.kill(child, signal.SIGKILL)  # the pool process sending the run, not the worker that started it
        killed_at = len(send_times(world, range(30)))

        run = wait_for(
            lambda: ReminderRun.objects.filter(pk=run.pk, status=RunStatus.SUCCESS).first(), timeout=90, what="success"
        )
    finally:
        stop(worker)

    assert killed_at < 60, "the worker died mid-run"
    assert run.requeue_count == 1 and run.sent == 30, "the redelivered task took the run over and finished it"
    log = (tmp_path / "worker.log").read_text()
    # The redelivered task takes the run over, or the reaper the new pool process runs first re-queues it.
    assert "taken over from worker" in log or f"Reaped ReminderRun #{run.pk}: Re-queued after worker" in log
    for target in run.targets.select_related("chat"):
        messages = [m for m in world.chat_dump(target.chat.telegram_id)["messages"] if m["sender"] == SENDER]
        assert [message["random_id"] for message in messages] == target.random_ids, (
            f"group {target.chat.telegram_id} got {[m['text'] for m in messages]}"
        )


def test_a_worker_killed_between_parts_goes_on_at_the_next_part_after_telegram_forgot(fanout_world, tmp_path):
    # Telegram forgets random_ids after a second, and slow mode holds each group's second part 3 s back.
    world = fanout_world({**groups_world(groups=6, slow_mode=3), "quirks": {"random_id_memory_seconds": 1}})
    reminder = make_reminder(parts=[PartSpec(text="one"), PartSpec(text="two")])
    purge_queues()
    worker = start_celery_worker(tmp_path)
    try:
        run = reminder_fire(reminder=reminder)
        wait_for(lambda: len(send_times(world, range(6))) >= 3, timeout=60, what="the first groups' first parts")
        time.sleep(1)  # well inside their slow mode: nothing is in flight
        run.refresh_from_db()
        os.kill(int(run.worker_id.rsplit("-", 2)[1]), signal.SIGKILL)
        halfway = list(run.targets.order_by("pk").values_list("status", "parts_sent"))

        run = wait_for(
            lambda: ReminderRun.objects.filter(pk=run.pk, status=RunStatus.SUCCESS).first(), timeout=90, what="success"
        )
    finally:
        stop(worker)

    assert halfway == [("sending", 1)] * 3 + [("pending", 0)] * 3, "the progress of the killed worker was kept"
    assert run.requeue_count == 1 and run.sent == 6
    for n in range(6):
        messages = [m["text"] for m in world.chat_dump(group_id(n))["messages"] if m["sender"] == SENDER]
        assert messages == ["one", "two"], f"group {n} got {messages}"
