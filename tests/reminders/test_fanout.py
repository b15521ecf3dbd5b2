"""The fan-out in this process, against the sandbox: delivery, media, the window, operator actions, errors."""

import asyncio
import math
import threading
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection, connections
from django.test.utils import CaptureQueriesContext

from accounts.models import AuthState
from config.storage import object_store_parse
from core import locks
from core.leases import session_lease
from core.models import Notification, RunStatus
from core.runs import run_claim
from core.tasks import runs_reap_all
from reminders import fanout
from reminders.models import WAITING, PauseCause, ReminderRun, ReminderRunTarget, TargetStatus
from reminders.selectors import reminder_spec
from reminders.services import (
    CANCELED,
    PartSpec,
    ReminderStateError,
    reminder_fire,
    reminder_run_cancel,
    reminder_run_resume,
    reminder_run_retry_failed,
    reminder_runs_auto_resume,
    reminder_update,
)
from telegram.records import PART_SIZE
from telegram.sandbox.faults import SandboxCrash
from tests.support.reminders import (
    KL,
    KL_AFTER_CLOSE,
    KL_MORNING,
    KL_NEXT_MORNING,
    SENDER,
    account,
    execute,
    group_id,
    groups_world,
    image,
    make_reminder,
    posts,
)

pytestmark = pytest.mark.django_db


def uploads_of(world, phone: str = SENDER, *, size: int) -> float:
    """Media uploads seen by the sandbox: each is one request per 512 KiB part plus the UploadMedia call."""
    calls = world.stats()["calls"].get(phone, {})
    requests = calls.get("upload.saveFilePart", 0) + calls.get("messages.uploadMedia", 0)
    return requests / (math.ceil(size / PART_SIZE) + 1)


def test_every_group_gets_every_part_in_order_once(fanout_world):
    world = fanout_world(groups_world(groups=7))
    media = image()
    reminder = make_reminder(parts=[PartSpec(text="Sale starts now"), PartSpec(media=media, caption="This week")])

    run = execute(reminder_fire(reminder=reminder))

    assert run.status == RunStatus.SUCCESS, run.error_summary
    assert (run.sent, run.failed, run.skipped, run.pending, run.total) == (7, 0, 0, 0, 7)
    assert run.messages_sent == 14 and run.active_seconds > 0 and run.error_summary == ""
    for target in run.targets.all():
        sent = posts(world, target.chat.telegram_id)
        assert [message["text"] for message in sent] == ["Sale starts now", "This week"]
        assert sent[1]["photo"]["sha256"] == media.sha256
        assert [message["random_id"] for message in sent] == target.random_ids
        assert target.status == TargetStatus.SENT and target.attempts == 1 and target.latency_ms is not None


def test_each_media_is_uploaded_once_per_run_and_reused(fanout_world):
    world = fanout_world(groups_world(groups=6))
    first, second = image(1), image(2)
    parts = [PartSpec(media=first), PartSpec(text="and"), PartSpec(media=second), PartSpec(media=first)]
    reminder = make_reminder(parts=parts)
    world.stats_reset()

    execute(reminder_fire(reminder=reminder))
    assert uploads_of(world, size=first.size) == 2, "two unique media, uploaded once each for 6 groups"

    execute(reminder_fire(reminder=reminder))
    assert uploads_of(world, size=first.size) == 4, "a new run uploads again (handles are not kept across runs)"


def test_media_kept_in_an_object_store_is_sent_from_there(fanout_world, object_store, settings, tmp_path):
    world = fanout_world(groups_world(groups=3))
    media = image()
    reminder = make_reminder(parts=[PartSpec(media=media, caption="Look")])

    run = execute(reminder_fire(reminder=reminder))

    assert run.status == RunStatus.SUCCESS, run.error_summary
    assert all(posts(world, group_id(n))[0]["photo"]["sha256"] == media.sha256 for n in range(3))
    store = object_store_parse(object_store)
    keys = [item["Key"] for item in store.client().list_objects_v2(Bucket=store.bucket)["Contents"]]
    assert keys == [media.file.name] and not (tmp_path / "media").exists()


def test_an_expired_media_handle_is_uploaded_again_once_and_the_send_retried(fanout_world):
    world = fanout_world(
        groups_world(groups=3, faults=[{"op": "send", "chat": group_id(1), "error": "file_reference_expired"}])
    )
    media = image()
    reminder = make_reminder(parts=[PartSpec(media=media, caption="Look")])
    world.stats_reset()

    run = execute(reminder_fire(reminder=reminder))

    assert run.status == RunStatus.SUCCESS
    assert uploads_of(world, size=media.size) == 2
    assert all(len(posts(world, group_id(n))) == 1 for n in range(3))


def test_a_handle_that_keeps_expiring_fails_that_group_only(fanout_world):
    world = fanout_world(
        groups_world(
            groups=3, faults=[{"op": "send", "chat": group_id(0), "error": "file_reference_expired", "times": 2}]
        )
    )
    reminder = make_reminder(parts=[PartSpec(media=image())])

    run = execute(reminder_fire(reminder=reminder))

    assert (run.status, run.sent, run.failed) == (RunStatus.PARTIAL, 2, 1)
    assert "expiring" in run.targets.get(status=TargetStatus.FAILED).error
    assert posts(world, group_id(0)) == []


def test_a_forbidden_group_fails_alone_and_retry_failed_sends_only_it(fanout_world):
    world = fanout_world(
        groups_world(groups=4, faults=[{"op": "send", "chat": group_id(2), "error": "write_forbidden"}])
    )
    reminder = make_reminder()

    run = execute(reminder_fire(reminder=reminder))
    assert (run.status, run.sent, run.failed, run.pending) == (RunStatus.PARTIAL, 3, 1, 0)
    assert run.error_summary == "3 of 4 groups delivered, 1 failed. Retry failed sends to them again."
    failed = run.targets.get(status=TargetStatus.FAILED)
    assert failed.chat.telegram_id == group_id(2) and "CHAT_WRITE_FORBIDDEN" in failed.error

    run = execute(reminder_run_retry_failed(run=run))

    assert (run.status, run.sent, run.failed) == (RunStatus.SUCCESS, 4, 0)
    assert [len(posts(world, group_id(n))) for n in range(4)] == [1, 1, 1, 1]
    assert run.targets.get(pk=failed.pk).attempts == 2
    assert run.targets.exclude(pk=failed.pk).filter(attempts=1).count() == 3, "only the failed group was retried"


def test_forum_targets_post_in_their_topic(fanout_world):
    world = fanout_world(groups_world(groups=2, forum=True))
    news, general = account().chats.order_by("telegram_id")
    reminder = make_reminder(chats=[news, general])
    reminder.targets.filter(chat=news).update(topic_id=7)

    execute(reminder_fire(reminder=reminder))

    assert [message["topic"] for message in posts(world, news.telegram_id)] == [7]
    assert [message["topic"] for message in posts(world, general.telegram_id)] == [1], "no topic: General"


# The delivery window -----------------------------------------------------------------------------------------------


def test_the_window_closing_pauses_the_run_with_the_rest_pending(fanout_world, at):
    world = fanout_world(groups_world(groups=10))
    reminder = make_reminder(timezone=KL, start=9, end=18)
    at(KL_MORNING)
    run = reminder_fire(reminder=reminder)
    assert run.window_end_at.isoformat() == "2026-11-25T10:00:00+00:00", "18:00 in Kuala Lumpur"

    at(KL_MORNING, then=KL_AFTER_CLOSE, after=4)  # the window check passes for 4 groups, then it has closed
    run = execute(run)

    assert run.status == RunStatus.PAUSED
    assert (run.sent, run.pending, run.failed, run.total) == (4, 6, 0, 10)
    assert run.error_summary == (
        "Delivery window closed at 18:00 on Wed 25 Nov (Asia/Kuala_Lumpur). 4 of 10 groups delivered, 6 still pending. "
        "Resume sends the rest."
    )
    assert run.targets.filter(status=TargetStatus.PENDING, attempts=0).count() == 6
    assert sum(len(posts(world, group_id(n))) for n in range(10)) == 4
    notification = Notification.objects.get(subject=f"reminder-run:{run.pk}")
    assert notification.title == "Reminder paused — 4 of 10 groups delivered. Tap to resume or cancel."
    assert notification.url == f"/reminders/{reminder.pk}/" and notification.severity == "warning"


def test_resume_sends_only_the_pending_groups(fanout_world, at):
    world = fanout_world(groups_world(groups=10))
    reminder = make_reminder(timezone=KL, start=9, end=18, parts=[PartSpec(text="one"), PartSpec(text="two")])
    at(KL_MORNING)
    run = reminder_fire(reminder=reminder)
    at(KL_MORNING, then=KL_AFTER_CLOSE, after=3)
    run = execute(run)
    delivered = set(run.targets.filter(status=TargetStatus.SENT).values_list("pk", flat=True))

    at(KL_AFTER_CLOSE)
    with pytest.raises(ReminderStateError, match="opens at 09:00"):
        reminder_run_resume(run=run)

    at(KL_NEXT_MORNING)
    resumed = reminder_run_resume(run=run)
    assert resumed.pk == run.pk and resumed.status == RunStatus.QUEUED
    assert resumed.window_end_at.isoformat() == "2026-11-26T10:00:00+00:00"
    run = execute(resumed)

    assert (run.status, run.sent, run.pending) == (RunStatus.SUCCESS, 10, 0)
    for n in range(10):
        assert [message["text"] for message in posts(world, group_id(n))] == ["one", "two"]
    assert set(run.targets.filter(attempts=1).values_list("pk", flat=True)) >= delivered
    assert not run.targets.filter(attempts__gt=1).exists(), "no group was attempted twice"


def test_fired_after_the_window_waits_for_it_and_starts_by_itself_when_it_opens(
    fanout_world, at, django_capture_on_commit_callbacks
):
    world = fanout_world(groups_world(groups=3))
    reminder = make_reminder(timezone=KL, start=9, end=18)
    at(KL_AFTER_CLOSE)

    with django_capture_on_commit_callbacks() as callbacks:
        run = reminder_fire(reminder=reminder)

    assert (run.status, run.finished_at, run.window_end_at) == (WAITING, None, None)
    assert run.error_summary == (
        "Fired at 18:00 on Wed 25 Nov (Asia/Kuala_Lumpur), outside the delivery window 09:00–18:00: "
        "it starts by itself when the window opens, at 09:00 on Thu 26 Nov."
    )
    assert callbacks == [], "nothing is queued before the window opens"
    assert execute(run).status == WAITING, "a stray delivery does not claim a waiting run"
    assert reminder_runs_auto_resume() == [], "still closed"

    at(KL_NEXT_MORNING)  # 09:30 in Kuala Lumpur: what beat does every minute
    with django_capture_on_commit_callbacks() as callbacks:
        assert reminder_runs_auto_resume() == [run.pk]
    assert len(callbacks) == 1, "queued once the window is open"
    run.refresh_from_db()
    assert (run.status, run.error_summary) == (RunStatus.QUEUED, "")
    assert run.window_end_at == datetime(2026, 11, 26, 10, 0, tzinfo=UTC)
    assert execute(run).status == RunStatus.SUCCESS
    assert all(len(posts(world, group_id(n))) == 1 for n in range(3))


def test_a_waiting_run_waits_for_the_window_as_edited(fanout_world, at):
    fanout_world(groups_world(groups=2))
    reminder = make_reminder(timezone=KL, start=9, end=18)
    at(KL_AFTER_CLOSE)  # 18:00 in Kuala Lumpur
    run = reminder_fire(reminder=reminder)

    reminder_update(
        reminder=reminder, spec=replace(reminder_spec(reminder=reminder), window_start_hour=20, window_end_hour=6)
    )
    run.refresh_from_db()
    assert run.error_summary.endswith(
        "outside the delivery window 20:00–06:00: it starts by itself when the window opens, at 20:00 on Wed 25 Nov."
    )

    reminder_update(reminder=reminder, spec=replace(reminder_spec(reminder=reminder), window_start_hour=17))
    run.refresh_from_db()
    assert run.error_summary.endswith("the window is open now; it starts within a minute.")
    assert reminder_runs_auto_resume() == [run.pk]


def test_a_waiting_run_can_be_canceled_and_then_never_starts(fanout_world, at):
    fanout_world(groups_world(groups=2))
    reminder = make_reminder(timezone=KL, start=9, end=18)
    at(KL_AFTER_CLOSE)
    run = reminder_fire(reminder=reminder)

    run = reminder_run_cancel(run=run)

    assert (run.status, run.skipped, run.pending) == (RunStatus.PARTIAL, 2, 0)
    at(KL_NEXT_MORNING)
    assert reminder_runs_auto_resume() == []
    assert ReminderRun.objects.get(pk=run.pk).status == RunStatus.PARTIAL


def test_an_all_day_window_sends_through_midnight(fanout_world, at):
    world = fanout_world(groups_world(groups=6))
    reminder = make_reminder(timezone="UTC", start=0, end=24)
    before = datetime(2026, 11, 25, 23, 59, 59, tzinfo=UTC)
    at(before)
    run = reminder_fire(reminder=reminder)
    assert run.window_end_at is None

    at(before, then=datetime(2026, 11, 26, 0, 0, 30, tzinfo=UTC), after=3)  # midnight comes mid-run
    run = execute(run)

    assert (run.status, run.sent) == (RunStatus.SUCCESS, 6)
    assert all(len(posts(world, group_id(n))) == 1 for n in range(6))


def test_a_run_that_starts_after_its_window_closed_fails_with_nothing_sent(fanout_world, at):
    world = fanout_world(groups_world(groups=3))
    reminder = make_reminder(timezone=KL, start=9, end=18)
    at(KL_MORNING)
    run = reminder_fire(reminder=reminder)

    at(KL_AFTER_CLOSE)  # the worker picked the task up too late
    run = execute(run)

    assert (run.status, run.sent, run.pending) == (RunStatus.FAILED, 0, 3)
    assert run.error_summary.startswith(
        "Delivery window closed at 18:00 on Wed 25 Nov (Asia/Kuala_Lumpur). No group was delivered"
    )
    assert sum(len(posts(world, group_id(n))) for n in range(3)) == 0


def test_auto_resume_picks_up_a_paused_run_when_the_next_window_opens(
    fanout_world, at, django_capture_on_commit_callbacks
):
    fanout_world(groups_world(groups=4))
    reminder = make_reminder(timezone=KL, start=9, end=18, auto_resume=True)
    at(KL_MORNING)
    run = reminder_fire(reminder=reminder)
    at(KL_MORNING, then=KL_AFTER_CLOSE, after=1)
    run = execute(run)
    assert run.status == RunStatus.PAUSED and "resumes by itself" in run.error_summary

    at(KL_AFTER_CLOSE)
    assert reminder_runs_auto_resume() == []
    at(KL_NEXT_MORNING)
    with django_capture_on_commit_callbacks() as callbacks:
        assert reminder_runs_auto_resume() == [run.pk]
    assert len(callbacks) == 1, "the resumed run is enqueued"
    run.refresh_from_db()
    assert run.status == RunStatus.QUEUED
    assert execute(run).status == RunStatus.SUCCESS


def test_an_overnight_run_pauses_at_six_and_resumes_by_itself_at_ten_in_the_evening(
    fanout_world, at, django_capture_on_commit_callbacks
):
    world = fanout_world(groups_world(groups=5))
    reminder = make_reminder(timezone="Europe/Berlin", start=22, end=6, auto_resume=True)
    night = datetime(2026, 11, 26, 4, 50, tzinfo=UTC)  # 05:50 in Berlin, inside 22:00–06:00
    at(night)
    run = reminder_fire(reminder=reminder)
    assert run.window_end_at == datetime(2026, 11, 26, 5, 0, tzinfo=UTC)
    at(night, then=datetime(2026, 11, 26, 5, 0, 1, tzinfo=UTC), after=2)  # 06:00 comes after 2 groups

    run = execute(run)

    assert (run.status, run.sent, run.pending) == (RunStatus.PAUSED, 2, 3)
    assert "Delivery window closed at 06:00 on Thu 26 Nov (Europe/Berlin)" in run.error_summary
    for moment in (datetime(2026, 11, 26, 5, 0, 1, tzinfo=UTC), datetime(2026, 11, 26, 20, 59, tzinfo=UTC)):
        at(moment)
        assert reminder_runs_auto_resume() == [], f"still closed at {moment}"
    at(datetime(2026, 11, 26, 21, 0, 30, tzinfo=UTC))  # 22:00:30 in Berlin
    with django_capture_on_commit_callbacks() as callbacks:
        assert reminder_runs_auto_resume() == [run.pk]
    assert len(callbacks) == 1
    run = execute(run)
    assert (run.status, run.sent) == (RunStatus.SUCCESS, 5)
    assert all(len(posts(world, group_id(n))) == 1 for n in range(5))


# Cancel ------------------------------------------------------------------------------------------------------------


def test_cancel_skips_the_pending_groups_and_ends_the_run_partial(fanout_world, at):
    world = fanout_world(groups_world(groups=6))
    reminder = make_reminder(timezone=KL, start=9, end=18)
    at(KL_MORNING)
    run = reminder_fire(reminder=reminder)
    at(KL_MORNING, then=KL_AFTER_CLOSE, after=2)
    run = execute(run)

    run = reminder_run_cancel(run=run)

    assert (run.status, run.sent, run.skipped, run.pending) == (RunStatus.PARTIAL, 2, 4, 0)
    assert set(run.targets.filter(status=TargetStatus.SKIPPED).values_list("error", flat=True)) == {CANCELED}
    assert run.error_summary == "Canceled by operator: 2 of 6 groups delivered, 4 skipped."
    with pytest.raises(ReminderStateError):
        reminder_run_cancel(run=run)
    with pytest.raises(ReminderStateError):
        reminder_run_resume(run=run)
    assert execute(run).status == RunStatus.PARTIAL
    assert sum(len(posts(world, group_id(n))) for n in range(6)) == 2


def test_a_queued_run_canceled_before_it_starts_sends_nothing(fanout_world):
    world = fanout_world(groups_world(groups=3))
    run = reminder_fire(reminder=make_reminder())

    run = reminder_run_cancel(run=run)
    run = execute(run)

    assert (run.status, run.skipped) == (RunStatus.PARTIAL, 3)
    assert sum(len(posts(world, group_id(n))) for n in range(3)) == 0


def test_a_run_whose_session_stays_busy_is_queued_again_and_sent_later(fanout_world, settings):
    settings.REMINDER_SESSION_WAIT_SECONDS = 0
    world = fanout_world(groups_world(groups=3))
    run = reminder_fire(reminder=make_reminder())
    held, release = threading.Event(), threading.Event()

    def hold():
        async def main():
            async with session_lease(SENDER, wait_seconds=0):
                held.set()
                await asyncio.to_thread(release.wait)

        asyncio.run(main())

    holder = threading.Thread(target=hold)
    holder.start()
    assert held.wait(10)
    try:
        assert fanout.reminder_run_execute(run_id=run.pk) == fanout.BUSY
    finally:
        release.set()
        holder.join()
    run.refresh_from_db()
    assert (run.status, run.worker_id, run.sent, run.error) == (RunStatus.QUEUED, "", 0, "")
    assert sum(len(posts(world, group_id(n))) for n in range(3)) == 0

    run = execute(run)

    assert (run.status, run.sent) == (RunStatus.SUCCESS, 3)
    assert all(len(posts(world, group_id(n))) == 1 for n in range(3))


# Telegram's errors -------------------------------------------------------------------------------------------------


def test_peer_flood_rests_the_account_and_pauses_the_run(fanout_world):
    world = fanout_world(
        groups_world(groups=8, faults=[{"op": "send", "error": "peer_flood", "after": 3, "times": 100}])
    )
    reminder = make_reminder()

    run = execute(reminder_fire(reminder=reminder))

    assert (run.status, run.pause_cause) == (RunStatus.PAUSED, PauseCause.ACCOUNT_REST)
    assert run.sent == 3 and run.pending == 5 and run.failed == 0
    assert "resting until" in run.error_summary and "PEER_FLOOD" in run.error_summary
    assert "5 still pending" in run.error_summary
    sender = account()
    assert sender.auth_state == AuthState.AUTHENTICATED and sender.is_resting
    assert sender.rests.get().reason == f"Telegram answered PEER_FLOOD during run #{run.pk}"
    assert not run.targets.filter(status=TargetStatus.SENDING).exists()
    assert sum(len(posts(world, group_id(n))) for n in range(8)) == 3


def test_a_flood_wait_pauses_the_account_then_the_same_part_is_sent(fanout_world):
    world = fanout_world(
        groups_world(groups=4, faults=[{"op": "send", "error": "flood_wait", "seconds": 1, "after": 1}])
    )
    reminder = make_reminder(parts=[PartSpec(text="a"), PartSpec(text="b")])

    run = execute(reminder_fire(reminder=reminder))

    assert (run.status, run.sent) == (RunStatus.SUCCESS, 4)
    stamps = sorted(datetime.fromisoformat(message["date"]) for n in range(4) for message in posts(world, group_id(n)))
    assert len(stamps) == 8
    gaps = [(later - earlier).total_seconds() for earlier, later in zip(stamps, stamps[1:], strict=False)]
    assert max(gaps) >= 0.95, "every group waited out the FloodWait of the account"


def test_transient_trouble_is_retried_then_fails_that_group_only_saying_how_often(fanout_world, settings):
    settings.REMINDER_TRANSIENT_RETRIES = 2
    world = fanout_world(
        groups_world(
            groups=3,
            faults=[
                {"op": "send", "chat": group_id(0), "error": "network", "times": 2},
                {"op": "send", "chat": group_id(1), "error": "network", "times": 3},
            ],
        )
    )

    run = execute(reminder_fire(reminder=make_reminder()))

    assert (run.status, run.sent, run.failed) == (RunStatus.PARTIAL, 2, 1)
    failed = run.targets.get(status=TargetStatus.FAILED)
    assert failed.chat.telegram_id == group_id(1) and failed.error.endswith("(after 3 tries)")
    assert [len(posts(world, group_id(n))) for n in range(3)] == [1, 0, 1]


def test_slow_mode_spaces_the_parts_of_a_group(fanout_world):
    world = fanout_world(groups_world(groups=2, slow_mode=1))
    reminder = make_reminder(parts=[PartSpec(text="a"), PartSpec(text="b")])

    run = execute(reminder_fire(reminder=reminder))

    assert run.status == RunStatus.SUCCESS, run.error_summary
    for n in range(2):
        first, second = (datetime.fromisoformat(message["date"]) for message in posts(world, group_id(n)))
        assert (second - first).total_seconds() >= 1


def test_a_run_whose_account_is_logged_out_fails_at_once(fanout_world):
    fanout_world(groups_world(groups=2))
    reminder = make_reminder()
    sender = account()
    sender.auth_state = AuthState.EXPIRED
    sender.save()

    run = reminder_fire(reminder=reminder)

    assert run.status == RunStatus.FAILED and "log it in again" in run.error_summary
    with pytest.raises(ReminderStateError, match="log it in again"):
        reminder_run_resume(run=run)


# Crashes and concurrency -------------------------------------------------------------------------------------------


def test_a_crash_between_the_send_and_its_record_never_posts_twice(fanout_world, monkeypatch):
    world = fanout_world(groups_world(groups=5))
    reminder = make_reminder(parts=[PartSpec(text="one"), PartSpec(media=image())])
    run = reminder_fire(reminder=reminder)
    original = fanout.Fanout._target_end
    ends = []

    def dying(self, target, status, *args, **kwargs):
        ends.append(target.pk)
        if len(ends) == 3:
            raise SandboxCrash("killed after the send, before recording it")
        return original(self, target, status, *args, **kwargs)

    monkeypatch.setattr(fanout.Fanout, "_target_end", dying)
    with pytest.raises(SandboxCrash):
        fanout.reminder_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING
    assert run.targets.filter(status=TargetStatus.SENDING).exists()

    monkeypatch.setattr(fanout.Fanout, "_target_end", original)
    # The "dead" worker is this very process: what proves it gone to the next one is its heartbeat gone quiet.
    ReminderRun.objects.filter(pk=run.pk).update(heartbeat_at=run.heartbeat_at - timedelta(minutes=5))
    run = execute(run)  # the redelivered task finds the run running with nobody holding the account: takes over

    assert run.status == RunStatus.SUCCESS and run.requeue_count == 1
    for n in range(5):
        sent = posts(world, group_id(n))
        assert len(sent) == 2, f"group {n} got {len(sent)} messages"
        assert len({message["random_id"] for message in sent}) == 2


def test_a_second_run_on_a_busy_account_waits(fanout_world):
    fanout_world(groups_world(groups=2))
    reminder = make_reminder()
    run = reminder_fire(reminder=reminder)

    key = locks.lock_key(locks.FANOUT_ACCOUNT, str(account().pk))
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(%s)", [key])
        assert fanout.reminder_run_execute(run_id=run.pk) == fanout.BUSY
        run.refresh_from_db()
        assert run.status == RunStatus.QUEUED, "it stays queued for the task's retry"
        with other.cursor() as cursor:
            # Released here: a closed connection's server process lets its locks go a moment later.
            cursor.execute("SELECT pg_advisory_unlock(%s)", [key])
    finally:
        other.close()
    assert execute(run).status == RunStatus.SUCCESS


def test_firing_costs_a_constant_number_of_queries(fanout_world, django_assert_max_num_queries):
    fanout_world(groups_world(groups=40))
    few = make_reminder(groups=3, parts=[PartSpec(text="a"), PartSpec(media=image())])
    many = make_reminder(name="Big", parts=[PartSpec(text="a"), PartSpec(media=image())])

    with CaptureQueriesContext(connection) as small:
        reminder_fire(reminder=few)
    with django_assert_max_num_queries(len(small.captured_queries)):
        run = reminder_fire(reminder=many)
    assert ReminderRunTarget.objects.filter(run=run).count() == 40


def test_cancel_while_sending_stops_the_worker_and_keeps_what_went_out(fanout_world, monkeypatch):
    world = fanout_world(groups_world(groups=12))
    run = reminder_fire(reminder=make_reminder())
    original = fanout.Fanout._target_start
    started = []

    def cancel_on_the_fourth(self, target):
        started.append(target.pk)
        if len(started) == 4:
            reminder_run_cancel(run=run)  # the operator, from another request
        return original(self, target)

    monkeypatch.setattr(fanout.Fanout, "_target_start", cancel_on_the_fourth)

    assert fanout.reminder_run_execute(run_id=run.pk) is None, "the canceller ended the run, not the worker"

    run.refresh_from_db()
    delivered = sum(len(posts(world, group_id(n))) for n in range(12))
    assert run.status == RunStatus.PARTIAL
    assert (run.sent, run.skipped, run.pending) == (3, 9, 0) and delivered == 3
    assert run.error_summary.startswith("Canceled by operator: ")


def test_the_reaper_requeues_a_silent_run_and_sending_it_again_resumes(
    fanout_world, settings, django_capture_on_commit_callbacks
):
    world = fanout_world(groups_world(groups=4))
    run = reminder_fire(reminder=make_reminder())
    claimed = run_claim(model=ReminderRun, run_id=run.pk)
    first = claimed.targets.order_by("pk").first()
    ReminderRunTarget.objects.filter(pk=first.pk).update(status=TargetStatus.SENDING)
    settings.WORK_STALE_AFTER_SECONDS = 0

    with django_capture_on_commit_callbacks() as callbacks:
        report = runs_reap_all()

    assert report["reminders.ReminderRun"]["requeued"] == [run.pk] and len(callbacks) == 1
    run = execute(run)
    assert (run.status, run.sent, run.requeue_count) == (RunStatus.SUCCESS, 4, 1)
    assert all(len(posts(world, group_id(n))) == 1 for n in range(4))
