"""The account's protection across real OS processes and a real Celery worker: a PEER_FLOOD in one process
pauses the runs another process waits to send; the operator's stop switch and Pause reach a worker process."""

import os
import signal
import time

import pytest

from accounts import pace
from core.models import RunStatus
from reminders.models import PauseCause, ReminderRun
from reminders.services import reminder_fire, reminder_run_pause, reminder_run_resume
from tests.support.processes import purge_queues, run_in_processes, send_times, start_celery_worker, wait_for
from tests.support.reminders import SENDER, account, groups_world, make_reminder

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]

CONCURRENCY = 3  # REMINDER_GROUP_CONCURRENCY: sends already given their token when the account is stopped


def send_calls(world) -> int:
    return world.stats()["calls"].get(SENDER, {}).get("messages.sendMessage", 0)


def test_peer_flood_in_one_process_pauses_every_run_of_the_account(fanout_world, tmp_path):
    fault = {"op": "send", "error": "peer_flood", "after": 5, "times": 1000}
    world = fanout_world(groups_world(groups=24, faults=[fault]))
    chats = list(account().chats.order_by("telegram_id"))
    first = reminder_fire(reminder=make_reminder(chats=chats[:12], name="First"), enqueue=False)
    second = reminder_fire(reminder=make_reminder(chats=chats[12:], name="Second"), enqueue=False)

    reports = run_in_processes(tmp_path, [first], [second])

    endings = {run_id: ending for report in reports for run_id, ending in report.items()}
    for run in (first, second):
        run.refresh_from_db()
        assert (run.status, run.pause_cause) == (RunStatus.PAUSED, PauseCause.ACCOUNT_REST), run.error_summary
    sender = account()
    assert sender.is_resting and "PEER_FLOOD" in sender.rest_reason
    requests = send_calls(world)
    assert 6 <= requests <= 5 + CONCURRENCY, f"{requests} sends: nothing but the groups in flight after PEER_FLOOD"
    first_ran = endings[str(first.pk)] == "paused"
    waiting = second if first_ran else first
    assert waiting.sent == 0, "the run that waited never sent"


def test_the_stop_switch_and_pause_reach_a_celery_worker_and_resume_sends_every_group_once(fanout_world, tmp_path):
    world = fanout_world(groups_world(groups=40))
    reminder = make_reminder()
    purge_queues()
    worker = start_celery_worker(tmp_path)  # 300 a minute: 5 a second
    try:
        run = reminder_fire(reminder=reminder)
        wait_for(lambda: len(send_times(world, range(40))) >= 6, timeout=60, what="the first groups")
        pace.account_sending_set(account=account(), stopped=True)
        at_stop = send_calls(world)
        wait_for(
            lambda: ReminderRun.objects.filter(pk=run.pk, status=RunStatus.PAUSED).first(), timeout=30, what="pause"
        )
        time.sleep(1)
        after_stop = send_calls(world) - at_stop
        run.refresh_from_db()
        assert run.pause_cause == PauseCause.SENDING_STOPPED
        assert after_stop <= CONCURRENCY, f"{after_stop} sends after the stop"

        pace.account_sending_set(account=account(), stopped=False)  # its runs go on
        wait_for(lambda: len(send_times(world, range(40))) >= run.sent + 6, timeout=60, what="sending again")
        reminder_run_pause(run=run)
        paused_at = send_calls(world)
        time.sleep(1.5)
        after_pause = send_calls(world) - paused_at
        run.refresh_from_db()
        assert run.status == RunStatus.PAUSED and run.pause_cause == PauseCause.OPERATOR
        assert after_pause <= CONCURRENCY, f"{after_pause} sends after Pause: it stops at the next group"

        reminder_run_resume(run=run)
        run = wait_for(
            lambda: ReminderRun.objects.filter(pk=run.pk, status=RunStatus.SUCCESS).first(), timeout=90, what="success"
        )
    finally:
        if worker.poll() is None:
            os.killpg(worker.pid, signal.SIGTERM)
        worker.wait(timeout=30)

    assert run.sent == 40
    for target in run.targets.select_related("chat"):
        messages = world.chat_dump(target.chat.telegram_id)["messages"]
        assert [m["random_id"] for m in messages if m["sender"] == SENDER] == target.random_ids, "each group once"
