"""No part goes out after the delivery window's end: a FloodWait holds the whole account (this run, the groups in
flight, the account's next run) until it ends, and a wait that would cross the window's end pauses the run before
that part; a group whose slow mode would put its next part after the end waits at that part."""

import pytest

from accounts.models import Chat
from core.models import RunStatus
from reminders.models import PauseCause, TargetStatus
from reminders.services import PartSpec, reminder_fire
from tests.support.reminders import KL, KL_MORNING, account, execute, group_id, groups_world, make_reminder, posts

pytestmark = pytest.mark.django_db

DAY = 24 * 3600


def day_long_flood(chat: int) -> dict:
    return {"op": "send", "chat": chat, "error": "flood_wait", "seconds": DAY}


def test_a_flood_wait_past_the_window_holds_the_account_for_its_next_run(fanout_world, at, settings):
    settings.REMINDER_GROUP_CONCURRENCY = 1
    world = fanout_world(groups_world(groups=4, faults=[day_long_flood(group_id(0))]))
    at(KL_MORNING)
    groups = list(Chat.objects.filter(account_links__account=account()).order_by("telegram_id"))
    first = make_reminder(timezone=KL, start=9, end=18, chats=groups[:1], name="Morning")

    held = execute(reminder_fire(reminder=first))
    second = make_reminder(timezone=KL, start=9, end=18, chats=groups[1:], name="Noon")
    run = execute(reminder_fire(reminder=second))

    assert sum(len(posts(world, group_id(n))) for n in range(4)) == 0, "nothing is sent into the FloodWait"
    assert world.stats()["flood_waits"][account().phone] == 1
    assert (held.status, held.pause_cause, held.pending) == (RunStatus.FAILED, PauseCause.WINDOW, 1)
    assert held.error_summary.startswith(
        "Paused before the delivery window's end at 18:00 on Wed 25 Nov (Asia/Kuala_Lumpur): "
        f"Telegram asked {account()} to wait 24 h 00 min (FLOOD_WAIT)."
    )
    assert (run.status, run.pause_cause, run.pending) == (RunStatus.FAILED, PauseCause.WINDOW, 3)
    assert run.error_summary.startswith(
        "Paused before the delivery window's end at 18:00 on Wed 25 Nov (Asia/Kuala_Lumpur): "
        f"{account()} may send again only in 24 h 00 min, after it. No group was delivered; 3 of 3 still pending."
    ), run.error_summary


def test_groups_in_flight_send_no_further_part_after_a_flood_wait_past_the_window(fanout_world, at, settings):
    settings.REMINDER_GROUP_CONCURRENCY = 3
    world = fanout_world(groups_world(groups=3, faults=[day_long_flood(group_id(0))]))
    at(KL_MORNING)
    reminder = make_reminder(timezone=KL, start=9, end=18, parts=[PartSpec(text=word) for word in ("a", "b", "c")])

    run = execute(reminder_fire(reminder=reminder))

    sent = {n: [message["text"] for message in posts(world, group_id(n))] for n in range(3)}
    assert sent[0] == [] and all(texts in ([], ["a"]) for texts in sent.values()), sent
    assert run.pause_cause == PauseCause.WINDOW and run.sent == 0 and run.pending == 3
    for target in run.targets.select_related("chat"):
        assert target.status == TargetStatus.PENDING
        assert target.parts_sent == len(sent[target.chat.telegram_id - group_id(0)]), "it goes on at its next part"


def test_slow_mode_that_would_put_a_part_after_the_window_holds_that_group_only(fanout_world, at):
    data = groups_world(groups=2)
    data["chats"][0]["slow_mode_seconds"] = 5
    world = fanout_world(data)
    at(KL_MORNING.replace(hour=9, minute=59, second=58))  # 17:59:58 in Kuala Lumpur, two seconds before the end
    reminder = make_reminder(timezone=KL, start=9, end=18, parts=[PartSpec(text="one"), PartSpec(text="two")])

    run = execute(reminder_fire(reminder=reminder))

    assert [message["text"] for message in posts(world, group_id(0))] == ["one"], "part two would go out at 18:00:03"
    assert [message["text"] for message in posts(world, group_id(1))] == ["one", "two"], "the others go on"
    held = run.targets.get(chat__telegram_id=group_id(0))
    assert (held.status, held.parts_sent) == (TargetStatus.PENDING, 1)
    assert (run.status, run.pause_cause) == (RunStatus.PAUSED, PauseCause.WINDOW)
    assert run.error_summary.startswith(
        "Paused before the delivery window's end at 18:00 on Wed 25 Nov (Asia/Kuala_Lumpur): "
        "slow mode would put the next part of 1 group after it. 1 of 2 groups delivered, 1 still pending "
        "(1 with some parts sent; resume sends only the rest)."
    ), run.error_summary
