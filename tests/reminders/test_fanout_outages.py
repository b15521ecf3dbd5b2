"""The fan-out when the ground moves: PostgreSQL restarts, Redis forgets or goes away, the operator cancels."""

import threading
import time
from datetime import datetime

import pytest

from accounts import pace
from core.models import RunStatus
from reminders import fanout
from reminders.models import PauseCause, ReminderRunTarget, TargetStatus
from reminders.services import (
    CANCELED,
    PartSpec,
    reminder_fire,
    reminder_run_cancel,
    reminder_runs_auto_resume,
)
from tests.support.buckets import send_buckets_flush
from tests.support.reminders import SENDER, account, execute, group_id, groups_world, make_reminder, posts

THREE_PARTS = [PartSpec(text="One"), PartSpec(text="Two"), PartSpec(text="Three")]


@pytest.mark.django_db
def test_cancel_mid_group_sends_not_one_more_part(fanout_world, settings, monkeypatch):
    settings.REMINDER_GROUP_CONCURRENCY = 1
    world = fanout_world(groups_world(groups=4))
    run = reminder_fire(reminder=make_reminder(parts=THREE_PARTS))
    original = fanout.Fanout._part_sent
    second = run.targets.order_by("pk")[1]

    def cancel_after_the_seconds_first_part(self, target, index):
        original(self, target, index)
        if target.pk == second.pk and index == 0:
            reminder_run_cancel(run=run)  # the operator, from another request

    monkeypatch.setattr(fanout.Fanout, "_part_sent", cancel_after_the_seconds_first_part)

    assert fanout.reminder_run_execute(run_id=run.pk) is None, "the canceller ended the run, not the worker"

    assert [len(posts(world, group_id(n))) for n in range(4)] == [3, 1, 0, 0], "nothing left after the Cancel"
    run.refresh_from_db()
    second.refresh_from_db()
    assert run.status == RunStatus.PARTIAL and run.messages_sent == 4, "the counters count every message sent"
    assert (second.status, second.error, second.parts_sent) == (TargetStatus.SKIPPED, CANCELED, 1), "1 of 3 parts"


@pytest.mark.django_db(transaction=True)
def test_a_postgres_restart_stops_the_fanout_and_it_resumes_cleanly(fanout_world, settings, postgres_restart):
    settings.WORK_HEARTBEAT_SECONDS = 1
    settings.REMINDER_MAX_SEND_PER_MINUTE = 120  # two a second: the restart lands mid-run
    settings.REMINDER_SEND_BURST = 1
    data = groups_world(groups=8)
    data["quirks"] = {"auth_key_duplicated": True}
    world = fanout_world(data)
    run = reminder_fire(reminder=make_reminder(parts=THREE_PARTS[:2]))
    restarted = {}

    def restart_after_three_messages():
        while sum(len(posts(world, group_id(n))) for n in range(8)) < 3:
            time.sleep(0.05)
        postgres_restart()
        restarted["at"] = time.monotonic()

    restarter = threading.Thread(target=restart_after_three_messages)
    restarter.start()
    assert fanout.reminder_run_execute(run_id=run.pk) is None, "handed back, neither finished nor failed"
    stopped_at = time.monotonic()
    restarter.join()

    assert stopped_at - restarted["at"] < 3
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and run.error.startswith("Interrupted:"), run.error
    run = execute(run)
    assert run.status == RunStatus.SUCCESS, run.error_summary
    assert all([m["text"] for m in posts(world, group_id(n))] == ["One", "Two"] for n in range(8)), "each part once"
    assert world.stats()["sessions"][SENDER]["duplicated"] == 0
    assert account().auth_state == "authenticated"


@pytest.mark.django_db
def test_a_redis_flush_mid_run_keeps_the_learned_pace(fanout_world, settings, monkeypatch):
    settings.REMINDER_GROUP_CONCURRENCY = 1
    fanout_world(groups_world(groups=6))
    sender = account()
    ceiling = settings.REMINDER_MAX_SEND_PER_MINUTE
    run = reminder_fire(reminder=make_reminder())
    original = fanout.Fanout._target_end

    def learn_then_forget(self, target, status, error="", latency_ms=None):
        original(self, target, status, error, latency_ms)
        if target.pk == run.targets.order_by("pk")[1].pk:
            # Telegram said "too fast" (the pace is recorded), then Redis restarted without its data.
            lowered = self.bucket.lower(factor=0.5, floor_per_minute=1, pause_seconds=0, recover_to=0.5)
            pace.account_pace_record(account=self.account, kind="flood_wait", before=ceiling, pace=lowered)
            send_buckets_flush()

    monkeypatch.setattr(fanout.Fanout, "_target_end", learn_then_forget)

    assert execute(run).status == RunStatus.SUCCESS

    assert pace.account_bucket(account=sender).state().per_minute == pytest.approx(ceiling / 2)


@pytest.mark.django_db
def test_a_redis_flush_mid_run_does_not_forget_the_accounts_rest(fanout_world, settings, monkeypatch):
    settings.REMINDER_GROUP_CONCURRENCY = 1
    world = fanout_world(groups_world(groups=4))
    run = reminder_fire(reminder=make_reminder())
    original = fanout.Fanout._target_end

    def rest_then_forget(self, target, status, error="", latency_ms=None):
        original(self, target, status, error, latency_ms)
        if not self.account.is_resting:
            pace.account_rest(account=self.account, reason="Telegram answered PEER_FLOOD elsewhere")
            send_buckets_flush()  # Redis restarted without its data: the bucket's halt is gone

    monkeypatch.setattr(fanout.Fanout, "_target_end", rest_then_forget)

    run = execute(run)

    assert run.status == RunStatus.PAUSED
    assert [len(posts(world, group_id(n))) for n in range(4)] == [1, 0, 0, 0], "nothing more while it rests"


@pytest.mark.django_db
def test_a_redis_flush_mid_run_gives_no_fresh_burst(fanout_world, settings, monkeypatch):
    settings.REMINDER_MAX_SEND_PER_MINUTE = 600  # ten a second
    world = fanout_world(groups_world(groups=12))
    run = reminder_fire(reminder=make_reminder(parts=THREE_PARTS[:1]))
    original = fanout.Fanout._target_end

    def forget_after_each_group(self, target, status, error="", latency_ms=None):
        original(self, target, status, error, latency_ms)
        send_buckets_flush()  # Redis restarted without its data, or evicted the bucket

    monkeypatch.setattr(fanout.Fanout, "_target_end", forget_after_each_group)

    assert execute(run).status == RunStatus.SUCCESS

    sent = sorted(
        datetime.fromisoformat(message["date"]).timestamp() for n in range(12) for message in posts(world, group_id(n))
    )
    assert len(sent) == 12
    burst, rate = settings.REMINDER_SEND_BURST, 10
    for first in range(len(sent)):
        for last in range(first + 1, len(sent)):
            allowed = burst + rate * (sent[last] - sent[first]) + 1  # one of slack: the sandbox's arrival times
            assert last - first + 1 <= allowed, f"{last - first + 1} sends in {sent[last] - sent[first]:.3f} s"


@pytest.mark.django_db
def test_redis_away_pauses_the_run_with_its_cause_and_it_resumes_once_redis_answers(
    fanout_world, settings, django_capture_on_commit_callbacks
):
    world = fanout_world(groups_world(groups=3))
    run = reminder_fire(reminder=make_reminder())
    redis_url = settings.REDIS_URL
    settings.REDIS_URL = "redis://127.0.0.1:9/0"  # nothing listens there: as a Redis being restarted
    settings.REDIS_PATIENCE_SECONDS = 1

    run = execute(run)

    assert run.status == RunStatus.PAUSED, "an outage is not the run's failure"
    assert run.pause_cause == PauseCause.OUTAGE
    assert run.error_summary.startswith("Paused: Redis (the shared send budget) did not answer for 1 s."), (
        run.error_summary
    )
    assert "It resumes by itself once Redis answers again" in run.error_summary
    assert "Error" not in run.error_summary and "refused" not in run.error_summary, "the operator's words"
    assert all(posts(world, group_id(n)) == [] for n in range(3))
    assert ReminderRunTarget.objects.filter(run=run, status=TargetStatus.SENDING).count() == 0, "none left in flight"
    assert reminder_runs_auto_resume() == [], "Redis is still away: it waits"

    settings.REDIS_URL = redis_url  # Redis is back

    with django_capture_on_commit_callbacks() as callbacks:
        assert reminder_runs_auto_resume() == [run.pk]
    assert len(callbacks) == 1, "queued again"
    run = execute(run)
    assert run.status == RunStatus.SUCCESS and all(len(posts(world, group_id(n))) == 1 for n in range(3))


@pytest.mark.django_db
def test_the_api_says_a_run_paused_by_an_outage(fanout_world, settings, api):
    fanout_world(groups_world(groups=2))
    run = reminder_fire(reminder=make_reminder())
    settings.REDIS_URL = "redis://127.0.0.1:9/0"
    settings.REDIS_PATIENCE_SECONDS = 1
    execute(run)

    body = api.get(f"/api/reminder-runs/{run.pk}/").json()

    assert body["status"] == "paused" and body["pause_cause"] == "outage"
    assert body["error_summary"].startswith("Paused: Redis (the shared send budget) did not answer")
