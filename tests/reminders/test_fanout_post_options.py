"""Per reminder: silent posts, link previews off, pin (unpinning the previous run's) and replacing the previous
run's post in each group, each done once per group even when a run is sent again."""

from dataclasses import replace

import pytest

from core.models import RunStatus
from reminders.models import TargetStatus
from reminders.selectors import reminder_spec
from reminders.services import PartSpec, reminder_fire, reminder_update
from tests.support.reminders import SENDER, execute, group_id, groups_world, image, make_reminder, posts

pytestmark = pytest.mark.django_db


def dump(world, n: int) -> dict:
    return world.chat_dump(group_id(n))


def test_silent_posts_without_link_previews_are_recorded_so(fanout_world):
    world = fanout_world(groups_world(groups=2))
    reminder = make_reminder(
        parts=[PartSpec(text="See https://shop.example"), PartSpec(album=[image(1), image(2)])],
        silent=True,
        link_preview=False,
    )

    run = execute(reminder_fire(reminder=reminder))

    assert run.status == RunStatus.SUCCESS, run.error_summary
    assert run.options == {
        "silent": True,
        "link_preview": False,
        "pin": False,
        "replace_previous": False,
        "edit_in_place": False,
    }
    for n in range(2):
        text, *album = posts(world, group_id(n))
        assert (text["silent"], text["link_preview"], text["pinned"]) == (True, False, False)
        assert [message["silent"] for message in album] == [True, True]
    target = run.targets.get(chat__telegram_id=group_id(0))
    text, *album = posts(world, group_id(0))
    assert target.message_ids == [text["id"], album[0]["id"]] and target.album_ids == [album[1]["id"]]


def test_the_next_run_replaces_and_repins_the_previous_runs_post(fanout_world):
    world = fanout_world(groups_world(groups=3))
    reminder = make_reminder(parts=[PartSpec(text="Week 1"), PartSpec(album=[image(1), image(2)])], pin=True)
    first = execute(reminder_fire(reminder=reminder))
    assert first.status == RunStatus.SUCCESS, first.error_summary
    week_one = {n: [message["id"] for message in posts(world, group_id(n))] for n in range(3)}
    assert all(dump(world, n)["messages"][-3]["pinned"] for n in range(3))

    spec = reminder_spec(reminder=reminder)
    reminder_update(reminder=reminder, spec=replace(spec, parts=[PartSpec(text="Week 2")], replace_previous=True))
    second = execute(reminder_fire(reminder=reminder, again=True))

    assert second.status == RunStatus.SUCCESS, second.error_summary
    for n in range(3):
        chat = dump(world, n)
        assert chat["deleted"] == week_one[n]  # the text and both album items
        [post] = [message for message in chat["messages"] if message["sender"] == SENDER]
        assert (post["text"], post["pinned"]) == ("Week 2", True)
    assert all(target.previous_removed and target.pinned for target in second.targets.all())
    calls = world.stats()["calls"][SENDER]
    assert calls["channels.deleteMessages"] == 3
    assert calls["messages.updatePinnedMessage"] == 6  # each group: week 1 pinned; week 2 pinned


def test_a_group_sent_again_does_not_delete_or_pin_twice(fanout_world):
    world = fanout_world(groups_world(groups=1))
    reminder = make_reminder(parts=[PartSpec(text="Week 1")])
    execute(reminder_fire(reminder=reminder))
    spec = reminder_spec(reminder=reminder)
    reminder_update(
        reminder=reminder, spec=replace(spec, parts=[PartSpec(text="Week 2")], replace_previous=True, pin=True)
    )
    run = execute(reminder_fire(reminder=reminder, again=True))
    world.stats_reset()
    # as if the worker died after the group's steps but before its end was recorded
    target = run.targets.get()
    target.status = TargetStatus.PENDING
    target.save(update_fields=["status"])
    run.status, run.pending, run.sent = RunStatus.QUEUED, 1, 0
    run.save(update_fields=["status", "pending", "sent"])

    run = execute(run)

    assert run.status == RunStatus.SUCCESS, run.error_summary
    calls = world.stats()["calls"].get(SENDER, {})
    assert calls.get("channels.deleteMessages", 0) == 0 and calls.get("messages.updatePinnedMessage", 0) == 0
    assert [message["text"] for message in posts(world, group_id(0))] == ["Week 2"]


def test_pinning_the_new_post_unpins_the_previous_one_it_keeps(fanout_world):
    world = fanout_world(groups_world(groups=1))
    reminder = make_reminder(parts=[PartSpec(text="Week 1")], pin=True)
    execute(reminder_fire(reminder=reminder))
    spec = reminder_spec(reminder=reminder)
    reminder_update(reminder=reminder, spec=replace(spec, parts=[PartSpec(text="Week 2")]))

    run = execute(reminder_fire(reminder=reminder, again=True))

    assert run.status == RunStatus.SUCCESS, run.error_summary
    assert [(m["text"], m["pinned"]) for m in posts(world, group_id(0))] == [("Week 1", False), ("Week 2", True)]


def test_a_pin_telegram_refuses_leaves_the_group_sent_and_is_not_tried_again(fanout_world):
    world = fanout_world(groups_world(groups=2))
    # the second request to group 0 is the pin
    world.fault_add({"op": "any", "chat": group_id(0), "error": "write_forbidden", "after": 1})
    reminder = make_reminder(parts=[PartSpec(text="Week 1")], pin=True)

    run = execute(reminder_fire(reminder=reminder))

    assert (run.status, run.sent) == (RunStatus.SUCCESS, 2), run.error_summary
    assert [[m["pinned"] for m in posts(world, group_id(n))] for n in range(2)] == [[False], [True]]
    assert all(target.pinned for target in run.targets.all())


def test_a_pin_that_network_trouble_outlasts_leaves_the_group_sent(fanout_world, settings):
    settings.REMINDER_TRANSIENT_RETRIES = 1
    world = fanout_world(groups_world(groups=2))
    world.fault_add({"op": "any", "chat": group_id(0), "error": "network", "after": 1, "times": 5})
    reminder = make_reminder(parts=[PartSpec(text="Week 1")], pin=True)

    run = execute(reminder_fire(reminder=reminder))

    assert (run.status, run.sent, run.failed) == (RunStatus.SUCCESS, 2, 0), run.error_summary
    assert [[m["pinned"] for m in posts(world, group_id(n))] for n in range(2)] == [[False], [True]]
