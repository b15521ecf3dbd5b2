"""A fan-out that protects its account: the pace adapts to Telegram's answers, the account rests before a ban,
a run pauses itself when too many groups fail, the operator pauses a run or stops an account, pending groups move
to another account, and the account's health shows it all. Against the sandbox and real Redis."""

from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from accounts import pace
from accounts.models import AccountPaceEvent, PaceEventKind, TelegramAccount
from accounts.selectors import account_health
from core.models import RunStatus
from ingestion.services import ingestion_cycle_start, ingestion_run_request
from reminders import fanout
from reminders.models import PauseCause, ReminderRun, TargetStatus
from reminders.services import (
    PartSpec,
    ReminderStateError,
    reminder_fire,
    reminder_run_move,
    reminder_run_pause,
    reminder_run_resume,
)
from tests.support.reminders import SENDER, SENDER_B, account, execute, group_id, groups_world, make_reminder, posts

pytestmark = pytest.mark.django_db

CEILING = 600  # a minute made short: 10 a second


@pytest.fixture(autouse=True)
def paced(settings):
    settings.REMINDER_MAX_SEND_PER_MINUTE = CEILING
    settings.REMINDER_PACE_RAISE_EVERY = 0  # the tests that want raising turn it on
    settings.ACCOUNT_REST_FLOOD_WAITS = 50


def flooding_world(*, groups: int, above: int, window: int = 1, **extra) -> dict:
    """Telegram's hidden limit: the sender may send `above` messages in any `window` seconds."""
    world = groups_world(groups=groups, **extra)
    world["accounts"][0]["flood_above_per_minute"] = above
    world["quirks"] = {"flood_window_seconds": window}
    return world


def all_posts(world, groups: int, phone: str = SENDER) -> int:
    return sum(len(posts(world, group_id(n), phone)) for n in range(groups))


# The pace adapts ---------------------------------------------------------------------------------------------------


def test_a_flood_wait_lowers_the_shared_pace_and_says_why(fanout_world):
    world = fanout_world(flooding_world(groups=30, above=6))  # 360 a minute hidden, under the ceiling of 600

    run = execute(reminder_fire(reminder=make_reminder()))

    assert run.status == RunStatus.SUCCESS and run.sent == 30
    sender = account()
    floods = AccountPaceEvent.objects.filter(account=sender, kind=PaceEventKind.FLOOD_WAIT)
    assert floods.count() == world.stats()["flood_waits"][SENDER] >= 1
    first = floods.order_by("at").first()
    assert first.budget_before == pytest.approx(CEILING) and first.budget_after == pytest.approx(CEILING * 0.7)
    assert first.wait_seconds >= 1 and "FLOOD_WAIT" in first.reason
    assert sender.send_budget_per_minute < CEILING and "FLOOD_WAIT" in sender.send_budget_reason
    live = pace.account_bucket(account=sender).state()
    assert live.per_minute == pytest.approx(sender.send_budget_per_minute), "recorded as the bucket holds it"
    assert all_posts(world, 30) == 30


def test_the_next_run_starts_at_the_learned_pace_even_when_redis_forgot_it(fanout_world):
    fanout_world(groups_world(groups=2))
    sender = account()
    TelegramAccount.objects.filter(pk=sender.pk).update(send_budget_per_minute=120, send_budget_reason="learned")
    sender.refresh_from_db()

    assert pace.account_bucket(account=sender).state().per_minute == pytest.approx(120)


def test_clean_sending_raises_the_pace_slowly_and_not_past_what_drew_the_flood(fanout_world, settings):
    settings.REMINDER_PACE_RAISE_EVERY = 4
    fanout_world(groups_world(groups=40))
    sender = account()
    bucket = pace.account_bucket(account=sender)
    lowered = bucket.lower(factor=0.5, floor_per_minute=2, pause_seconds=0, recover_to=0.9)
    assert lowered.per_minute == pytest.approx(300) and lowered.cap_per_minute == pytest.approx(540)

    run = execute(reminder_fire(reminder=make_reminder()))

    assert run.status == RunStatus.SUCCESS
    raised = list(AccountPaceEvent.objects.filter(account=sender, kind=PaceEventKind.RAISED).order_by("at", "pk"))
    assert len(raised) == 8, "one step (5 % of the ceiling) every 4 clean sends, until the cap"
    assert [event.budget_after for event in raised] == pytest.approx([330, 360, 390, 420, 450, 480, 510, 540])
    assert bucket.state().per_minute == pytest.approx(540), "never above 90 % of the pace that drew the FloodWait"


# Quarantine before a ban ---------------------------------------------------------------------------------------------


def test_flood_waits_above_the_threshold_rest_the_account_and_pause_every_run(fanout_world, settings):
    settings.ACCOUNT_REST_FLOOD_WAITS = 3
    fault = {"op": "send", "error": "flood_wait", "seconds": 1, "after": 2, "times": 100}
    world = fanout_world(groups_world(groups=12, faults=[fault]))
    sending = reminder_fire(reminder=make_reminder(name="Sending"), enqueue=False)
    waiting = reminder_fire(reminder=make_reminder(name="Waiting"), enqueue=False)

    sending = execute(sending)

    waiting.refresh_from_db()
    sender = account()
    floods = world.stats()["flood_waits"][SENDER]
    assert 3 <= floods <= 3 + 2, "the third FloodWait rests it (groups already in flight may bring one each)"
    assert sender.is_resting and sender.rest_reason in {f"{n} FloodWaits within 60 minutes" for n in range(3, 6)}
    assert (sending.status, sending.pause_cause) == (RunStatus.PAUSED, PauseCause.ACCOUNT_REST)
    assert (waiting.status, waiting.pause_cause) == (RunStatus.PAUSED, PauseCause.ACCOUNT_REST)
    assert "resting until" in sending.error_summary and "resumes by itself" in sending.error_summary
    assert execute(waiting).status == RunStatus.PAUSED, "a paused run does not start while its account rests"
    assert all_posts(world, 12) == 2


def test_a_resting_account_is_left_out_of_ingestion_and_new_runs_wait(fanout_world):
    fanout_world(groups_world(groups=3))
    sender = pace.account_rest(account=account(), reason="PEER_FLOOD")

    with pytest.raises(ValidationError, match="resting until"):
        ingestion_run_request(account=sender)
    assert ingestion_cycle_start() == []
    run = reminder_fire(reminder=make_reminder())
    assert (run.status, run.pause_cause) == (RunStatus.PAUSED, PauseCause.ACCOUNT_REST)
    with pytest.raises(ReminderStateError, match="resting until"):
        reminder_run_resume(run=run)


def test_runs_resume_by_themselves_after_the_rest(fanout_world):
    world = fanout_world(groups_world(groups=4))
    sender = pace.account_rest(account=account(), reason="PEER_FLOOD")
    run = reminder_fire(reminder=make_reminder(), enqueue=False)
    TelegramAccount.objects.filter(pk=sender.pk).update(resting_until=timezone.now() - timedelta(seconds=1))

    assert pace.account_rests_end() == [sender.pk]

    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED and run.pause_cause == ""
    assert execute(run).status == RunStatus.SUCCESS and all_posts(world, 4) == 4
    rest = account().rests.get()
    assert rest.ended_by == "time" and rest.ended_at is not None


def test_the_operator_can_keep_the_runs_paused_after_the_rest(fanout_world):
    fanout_world(groups_world(groups=2))
    sender = pace.account_rest(account=account(), reason="PEER_FLOOD")
    run = reminder_fire(reminder=make_reminder(), enqueue=False)
    pace.account_rest_keep_runs_paused(account=sender)

    pace.account_rest_end(account=sender, by="operator")

    run.refresh_from_db()
    assert (run.status, run.pause_cause) == (RunStatus.PAUSED, PauseCause.ACCOUNT_REST)
    assert not account().is_resting and account().rests.get().ended_by == "operator"


# Error threshold -----------------------------------------------------------------------------------------------------


def test_a_run_whose_recent_groups_fail_too_often_pauses_itself_with_the_reasons(fanout_world, settings):
    settings.REMINDER_ERROR_RECENT_GROUPS = 10
    settings.REMINDER_ERROR_SHARE_PERCENT = 20
    fault = {"op": "send", "error": "write_forbidden", "after": 4, "times": 1000}
    world = fanout_world(groups_world(groups=40, faults=[fault]))

    run = execute(reminder_fire(reminder=make_reminder()))

    assert (run.status, run.pause_cause) == (RunStatus.PAUSED, PauseCause.ERRORS)
    assert run.sent == 4 and 3 <= run.failed <= 3 + 2, "it stopped at the third failure (more than 2 of 10)"
    assert run.pending == 40 - run.sent - run.failed
    assert "groups failed (more than 20 %)" in run.error_summary and "CHAT_WRITE_FORBIDDEN" in run.error_summary
    assert all_posts(world, 40) == 4


# Pause by the operator, and the stop switch ------------------------------------------------------------------------


def pause_when_starting(monkeypatch, nth: int, action):
    """Do `action` (the operator, from another request) as the nth group starts."""
    original = fanout.Fanout._target_start
    started = []

    def start(self, target):
        started.append(target.pk)
        if len(started) == nth:
            action()
        return original(self, target)

    monkeypatch.setattr(fanout.Fanout, "_target_start", start)


def test_pause_stops_at_the_next_group_and_resume_goes_on_with_every_part_once(fanout_world, monkeypatch):
    world = fanout_world(groups_world(groups=12))
    run = reminder_fire(reminder=make_reminder(parts=[PartSpec(text="one"), PartSpec(text="two")]))
    pause_when_starting(monkeypatch, 4, lambda: reminder_run_pause(run=run))

    assert fanout.reminder_run_execute(run_id=run.pk) is None, "the operator ended the run, not the worker"

    run.refresh_from_db()
    assert (run.status, run.pause_cause) == (RunStatus.PAUSED, PauseCause.OPERATOR)
    assert (run.sent, run.pending) == (3, 9) and all_posts(world, 12) == 6
    assert "Paused by the operator" in run.error_summary
    monkeypatch.undo()
    reminder_run_resume(run=run)
    assert execute(run).status == RunStatus.SUCCESS
    for n in range(12):
        assert [message["text"] for message in posts(world, group_id(n))] == ["one", "two"]


def test_a_queued_run_paused_never_starts(fanout_world):
    world = fanout_world(groups_world(groups=3))
    run = reminder_fire(reminder=make_reminder())
    reminder_run_pause(run=run)

    assert fanout.reminder_run_execute(run_id=run.pk) is None
    assert all_posts(world, 3) == 0
    with pytest.raises(ReminderStateError, match="only a queued or running run can be paused"):
        reminder_run_pause(run=run)


def test_stop_all_sending_stops_the_run_at_its_next_message_and_allowing_resumes_it(fanout_world, monkeypatch):
    world = fanout_world(groups_world(groups=12))
    run = reminder_fire(reminder=make_reminder())
    pause_when_starting(monkeypatch, 4, lambda: pace.account_sending_set(account=account(), stopped=True))

    run = execute(run)

    assert (run.status, run.pause_cause) == (RunStatus.PAUSED, PauseCause.SENDING_STOPPED)
    assert run.sent == 3 and all_posts(world, 12) == 3, "nothing went out after the stop"
    assert "stopped for" in run.error_summary
    assert not run.targets.filter(status=TargetStatus.SENDING).exists()
    monkeypatch.undo()
    pace.account_sending_set(account=account(), stopped=False)
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED, "the runs the stop paused go on"
    assert execute(run).status == RunStatus.SUCCESS and all_posts(world, 12) == 12


# Moving pending groups to another account ---------------------------------------------------------------------------


def test_pending_groups_move_to_another_account_as_a_linked_run(fanout_world):
    world = fanout_world(groups_world(groups=6, accounts=(SENDER, SENDER_B)))
    run = reminder_fire(reminder=make_reminder())
    reminder_run_pause(run=run)

    moved = reminder_run_move(run=run, account=account(SENDER_B))

    run.refresh_from_db()
    assert moved.moved_from_id == run.pk and moved.status == RunStatus.QUEUED and moved.total == 6
    assert run.status == RunStatus.PARTIAL and run.skipped == 6
    assert f"6 pending groups moved to run #{moved.pk}, sent by" in run.error_summary
    assert set(run.targets.values_list("error", flat=True)) == {f"moved to run #{moved.pk} ({account(SENDER_B)})"}
    assert execute(moved).status == RunStatus.SUCCESS
    assert all_posts(world, 6, SENDER_B) == 6 and all_posts(world, 6, SENDER) == 0


def test_moving_to_an_account_that_is_not_in_every_group_is_refused(fanout_world):
    world = groups_world(groups=4, accounts=(SENDER, SENDER_B))
    world["chats"][2]["members"] = [SENDER]
    fanout_world(world)
    run = reminder_fire(reminder=make_reminder())
    reminder_run_pause(run=run)

    with pytest.raises(ReminderStateError, match="is not in 1 of these groups .*Group 0002"):
        reminder_run_move(run=run, account=account(SENDER_B))
    with pytest.raises(ReminderStateError, match="already sends from"):
        reminder_run_move(run=run, account=account(SENDER))
    run.refresh_from_db()
    assert run.status == RunStatus.PAUSED and run.pending == 4, "nothing changed"
    assert not ReminderRun.objects.filter(moved_from=run).exists()


# Health -------------------------------------------------------------------------------------------------------------


def test_health_counts_sends_flood_waits_and_rests(fanout_world):
    fanout_world(flooding_world(groups=20, above=6))
    execute(reminder_fire(reminder=make_reminder()))
    sender = account()

    health = account_health(account=sender)

    assert health.sends_last_hour == health.sends_last_day == 20
    floods = AccountPaceEvent.objects.filter(account=sender, kind=PaceEventKind.FLOOD_WAIT)
    assert health.flood_waits_last_day == floods.count() >= 1
    assert health.flood_wait_seconds_last_day == sum(floods.values_list("wait_seconds", flat=True))
    assert health.budget_per_minute < health.ceiling_per_minute == CEILING
    assert (health.verdict, health.verdict_label) == ("slowed", "Slowed by Telegram")

    pace.account_rest(account=sender, reason="PEER_FLOOD")
    health = account_health(account=account())
    assert health.verdict == "resting" and health.resting and [rest.reason for rest in health.rests] == ["PEER_FLOOD"]


def test_auto_resume_leaves_runs_the_operator_paused(fanout_world, at):
    from reminders.services import reminder_runs_auto_resume
    from tests.support.reminders import KL, KL_MORNING, KL_NEXT_MORNING

    fanout_world(groups_world(groups=3))
    at(KL_MORNING)
    run = reminder_fire(reminder=make_reminder(timezone=KL, start=9, end=18, auto_resume=True))
    reminder_run_pause(run=run)
    at(KL_NEXT_MORNING)

    assert reminder_runs_auto_resume() == []
    run.refresh_from_db()
    assert (run.status, run.pause_cause) == (RunStatus.PAUSED, PauseCause.OPERATOR)
