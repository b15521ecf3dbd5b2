"""Per-part progress: a target stopped between its parts goes on at its next unsent part, even after Telegram
has forgotten the random_ids of the parts already sent (the sandbox's `random_id_memory_seconds`)."""

import time
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import TelegramAccount
from core.models import RunStatus
from reminders import fanout
from reminders.models import ReminderRun, TargetStatus
from reminders.services import PartSpec, reminder_fire, reminder_run_resume, reminder_run_retry_failed
from telegram.sandbox.faults import SandboxCrash
from tests.support.buckets import send_buckets_flush
from tests.support.reminders import (
    KL,
    KL_MORNING,
    KL_NEXT_MORNING,
    execute,
    group_id,
    groups_world,
    make_reminder,
    posts,
)

pytestmark = pytest.mark.django_db

DAY = 24 * 3600


def forgetful_world(*, groups: int, faults: list[dict]) -> dict:
    """Telegram remembers a random_id for one second only."""
    return {**groups_world(groups=groups, faults=faults), "quirks": {"random_id_memory_seconds": 1}}


@pytest.fixture(autouse=True)
def one_group_at_a_time(settings):
    settings.REMINDER_GROUP_CONCURRENCY = 1


@pytest.fixture
def later(monkeypatch):
    """Move the sandbox server's clock on by `seconds`: long enough, and it forgets the random_ids sent before."""

    def move(seconds: float) -> None:
        monkeypatch.setattr("telegram.sandbox.world.clock", lambda: time.time() + seconds)

    return move


def texts(world, n: int) -> list[str]:
    return [message["text"] for message in posts(world, group_id(n))]


def test_a_worker_dying_between_parts_is_taken_over_at_the_next_part(fanout_world, later):
    world = fanout_world(
        forgetful_world(groups=3, faults=[{"op": "send", "chat": group_id(1), "error": "crash", "after": 1}])
    )
    run = reminder_fire(reminder=make_reminder(parts=[PartSpec(text="one"), PartSpec(text="two")]))

    with pytest.raises(SandboxCrash):  # the process dies as it sends group 1's second part
        fanout.reminder_run_execute(run_id=run.pk)
    stopped = run.targets.get(chat__telegram_id=group_id(1))
    assert (stopped.status, stopped.parts_sent) == (TargetStatus.SENDING, 1)
    assert [texts(world, n) for n in range(3)] == [["one", "two"], ["one"], []]

    later(60)
    # The "dead" worker is this very process: what proves it gone to the next one is its heartbeat gone quiet.
    ReminderRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(minutes=5))
    run = execute(run)

    assert (run.status, run.sent, run.requeue_count) == (RunStatus.SUCCESS, 3, 1)
    assert [texts(world, n) for n in range(3)] == [["one", "two"]] * 3, "each part exactly once in every group"
    assert list(run.targets.values_list("parts_sent", flat=True)) == [2, 2, 2]


def test_a_flood_wait_past_the_window_between_parts_pauses_and_resume_sends_only_the_rest(
    fanout_world, at, later, admin_user, client
):
    flood = {"op": "send", "chat": group_id(0), "error": "flood_wait", "seconds": DAY, "after": 1}
    world = fanout_world(forgetful_world(groups=2, faults=[flood]))
    at(KL_MORNING)
    run = execute(
        reminder_fire(
            reminder=make_reminder(timezone=KL, start=9, end=18, parts=[PartSpec(text="one"), PartSpec(text="two")])
        )
    )

    assert (run.status, run.sent, run.pending) == (RunStatus.PAUSED, 0, 2), "a part went out: paused, not failed"
    assert run.error_summary == (
        "Paused before the delivery window's end at 18:00 on Wed 25 Nov (Asia/Kuala_Lumpur): Telegram asked Sender 0 "
        "to wait 24 h 00 min (FLOOD_WAIT). 0 of 2 groups delivered, 2 still pending (1 with some parts sent; resume "
        "sends only the rest). Resume sends the rest."
    )
    assert (run.targets.get(chat__telegram_id=group_id(0)).parts_sent, texts(world, 0), texts(world, 1)) == (
        1,
        ["one"],
        [],
    )
    client.force_login(admin_user)
    page = client.get(reverse("reminders:activity-run", args=[run.pk])).content.decode()
    assert "1 of 2 parts" in page
    api = APIClient()
    api.force_authenticate(admin_user)
    shown = api.get(f"/api/reminder-runs/{run.pk}/targets/").json()["results"]
    assert [(target["status"], target["parts_sent"], target["parts_total"]) for target in shown] == [
        ("pending", 1, 2),
        ("pending", 0, 2),
    ]

    at(KL_NEXT_MORNING)
    later(DAY)
    # The account's FloodWait ran out: Redis's pause, and the hold the database keeps should Redis forget it.
    send_buckets_flush()
    TelegramAccount.objects.update(send_spent_until=None)
    run = execute(reminder_run_resume(run=run))

    assert (run.status, run.sent, run.pending) == (RunStatus.SUCCESS, 2, 0)
    assert [texts(world, n) for n in range(2)] == [["one", "two"]] * 2


def test_a_group_failed_after_its_first_part_is_retried_from_its_second(fanout_world, later):
    forbidden = {"op": "send", "chat": group_id(0), "error": "write_forbidden", "after": 1}
    world = fanout_world(forgetful_world(groups=2, faults=[forbidden]))
    run = execute(reminder_fire(reminder=make_reminder(parts=[PartSpec(text="one"), PartSpec(text="two")])))
    failed = run.targets.get(status=TargetStatus.FAILED)
    assert (run.status, failed.chat.telegram_id, failed.parts_sent) == (RunStatus.PARTIAL, group_id(0), 1)

    later(60)
    run = execute(reminder_run_retry_failed(run=run))

    assert (run.status, run.sent) == (RunStatus.SUCCESS, 2)
    assert [texts(world, n) for n in range(2)] == [["one", "two"]] * 2


def test_an_account_stopped_between_parts_says_which_groups_are_part_way(fanout_world):
    world = fanout_world(forgetful_world(groups=2, faults=[{"op": "send", "error": "peer_flood", "after": 3}]))

    run = execute(reminder_fire(reminder=make_reminder(parts=[PartSpec(text="one"), PartSpec(text="two")])))

    assert (run.status, run.sent, run.pending, run.messages_sent) == (RunStatus.PAUSED, 1, 1, 3)
    assert run.error_summary.endswith(
        f"(Telegram answered PEER_FLOOD during run #{run.pk}). 1 of 2 groups delivered, 1 still pending "
        "(1 with some parts sent; resume sends only the rest). It resumes by itself when the rest ends."
    )
    assert [texts(world, n) for n in range(2)] == [["one", "two"], ["one"]]
