"""Replace, edited in place: the previous run's post in each group is edited part by part where the parts allow
(text to text, one media to one media), else deleted and sent anew; what happened is recorded per group (the
run report says it), and a resumed or retried group never edits or deletes twice."""

import time
from dataclasses import replace

import pytest
from django.urls import reverse

from accounts.models import AccountPaceEvent, PaceEventKind
from core.models import RunStatus
from reminders.models import PauseCause, PreviousPost, Reminder, TargetStatus
from reminders.selectors import reminder_run_report, reminder_spec
from reminders.services import PartSpec, reminder_fire, reminder_update
from tests.support.pages import body, compose, htmx_post
from tests.support.reminders import SENDER, account, execute, group_id, groups_world, image, make_reminder, posts

pytestmark = pytest.mark.django_db


def week_two(reminder, parts, **options):
    spec = reminder_spec(reminder=reminder)
    options = {"replace_previous": True, "edit_in_place": True} | options
    reminder_update(reminder=reminder, spec=replace(spec, parts=parts, **options))
    return execute(reminder_fire(reminder=reminder, again=True))


def calls(world) -> dict:
    return world.stats()["calls"].get(SENDER, {})


def test_the_next_run_edits_the_previous_post_in_place(fanout_world):
    world = fanout_world(groups_world(groups=2))
    reminder = make_reminder(parts=[PartSpec(text="Week 1"), PartSpec(media=image(1), caption="Poster 1")], pin=True)
    first = execute(reminder_fire(reminder=reminder))
    assert first.status == RunStatus.SUCCESS, first.error_summary
    week_one = {n: [m["id"] for m in posts(world, group_id(n))] for n in range(2)}
    world.stats_reset()

    second = week_two(
        reminder, [PartSpec(text="**Week 2**", format="markdown"), PartSpec(media=image(2), caption="Poster 2")]
    )

    assert second.status == RunStatus.SUCCESS, second.error_summary
    for n in range(2):
        text, poster = posts(world, group_id(n))
        assert [text["id"], poster["id"]] == week_one[n]
        assert (text["text"], text["entities"][0]["type"], poster["text"]) == ("Week 2", "bold", "Poster 2")
        assert text["edit_date"] and poster["edit_date"] and text["pinned"]
        assert world.chat_dump(group_id(n))["deleted"] == []
    made = calls(world)
    assert made["messages.editMessage"] == 4 and "messages.sendMessage" not in made
    assert "channels.deleteMessages" not in made and "messages.updatePinnedMessage" not in made  # pinned still
    for target in second.targets.all():
        assert (target.previous_post, target.message_ids, target.pinned) == (
            PreviousPost.EDITED,
            week_one[target.chat.telegram_id - group_id(0)],
            True,
        )
    assert {row["previous_post"] for row in reminder_run_report(run=second)} == {"Edited in place"}


def test_a_resumed_or_retried_group_edits_nothing_twice(fanout_world):
    world = fanout_world(groups_world(groups=1))
    reminder = make_reminder(parts=[PartSpec(text="Week 1"), PartSpec(text="See you")])
    execute(reminder_fire(reminder=reminder))
    run = week_two(reminder, [PartSpec(text="Week 2"), PartSpec(text="See you soon")])
    assert run.status == RunStatus.SUCCESS, run.error_summary

    def send_again(parts_sent: int) -> dict:
        # as if the worker died after the group's first `parts_sent` parts, before its end was recorded
        world.stats_reset()
        run.targets.update(status=TargetStatus.PENDING, parts_sent=parts_sent)
        type(run).objects.filter(pk=run.pk).update(status=RunStatus.QUEUED, pending=1, sent=0)
        assert execute(run).status == RunStatus.SUCCESS
        return calls(world)

    assert send_again(2).get("messages.editMessage", 0) == 0
    again = send_again(1)
    assert again.get("messages.editMessage") == 1  # the second part only
    assert "messages.sendMessage" not in again and "channels.deleteMessages" not in again
    assert [m["text"] for m in posts(world, group_id(0))] == ["Week 2", "See you soon"]


def test_parts_of_another_shape_are_deleted_and_sent_anew_and_the_report_says_why(fanout_world):
    world = fanout_world(groups_world(groups=1))
    reminder = make_reminder(parts=[PartSpec(text="Week 1")])
    execute(reminder_fire(reminder=reminder))
    old = [m["id"] for m in posts(world, group_id(0))]

    run = week_two(reminder, [PartSpec(media=image(1), caption="Week 2")])

    assert run.status == RunStatus.SUCCESS, run.error_summary
    assert world.chat_dump(group_id(0))["deleted"] == old
    [post] = posts(world, group_id(0))
    assert (post["text"], post["edit_date"]) == ("Week 2", None)
    [row] = reminder_run_report(run=run)
    assert row["previous_post"].startswith("Deleted, sent anew: the parts changed")


def test_an_edit_telegram_refuses_falls_back_to_delete_and_send(fanout_world, monkeypatch):
    world = fanout_world(groups_world(groups=2))
    start = time.time()
    monkeypatch.setattr("telegram.sandbox.world.clock", lambda: start)
    reminder = make_reminder(parts=[PartSpec(text="Week 1")])
    execute(reminder_fire(reminder=reminder))
    gone = posts(world, group_id(0))[0]["id"]
    world.message_delete(group_id(0), gone)  # an admin removed it meanwhile
    too_old = posts(world, group_id(1))[0]["id"]
    monkeypatch.setattr("telegram.sandbox.world.clock", lambda: start + 7 * 86_400)  # a week later

    run = week_two(reminder, [PartSpec(text="Week 2")])

    assert run.status == RunStatus.SUCCESS, run.error_summary
    for n in range(2):
        [post] = posts(world, group_id(n))
        assert (post["text"], post["edit_date"]) == ("Week 2", None)
    assert world.chat_dump(group_id(1))["deleted"] == [too_old]
    notes = {t.chat.telegram_id: (t.previous_post, t.previous_note) for t in run.targets.all()}
    assert notes == {
        group_id(0): (PreviousPost.DELETED, "Telegram refused the edit (MESSAGE_ID_INVALID)"),
        group_id(1): (PreviousPost.DELETED, "Telegram refused the edit (MESSAGE_EDIT_TIME_EXPIRED)"),
    }


def test_an_edit_whose_media_expired_uploads_it_again_once_and_edits_again(fanout_world):
    world = fanout_world(groups_world(groups=2))
    reminder = make_reminder(parts=[PartSpec(text="Week 1"), PartSpec(media=image(1), caption="Poster 1")])
    execute(reminder_fire(reminder=reminder))
    week_one = [m["id"] for m in posts(world, group_id(0))]
    # the second request to the group is the poster's edit
    world.fault_add({"op": "any", "chat": group_id(0), "error": "file_reference_expired", "after": 1})
    world.stats_reset()

    run = week_two(reminder, [PartSpec(text="Week 2"), PartSpec(media=image(2), caption="Poster 2")])

    assert run.status == RunStatus.SUCCESS, run.error_summary
    text, poster = posts(world, group_id(0))
    assert [text["id"], poster["id"]] == week_one and (poster["text"], poster["edit_date"] is not None) == (
        "Poster 2",
        True,
    )
    made = calls(world)
    assert (made["messages.editMessage"], made["messages.uploadMedia"]) == (5, 2)
    assert "messages.sendMessage" not in made and "messages.sendMedia" not in made


def test_an_edit_whose_media_keeps_expiring_fails_that_group_only(fanout_world):
    world = fanout_world(groups_world(groups=2))
    reminder = make_reminder(parts=[PartSpec(media=image(1), caption="Poster 1")])
    execute(reminder_fire(reminder=reminder))
    world.fault_add({"op": "any", "chat": group_id(0), "error": "file_reference_expired", "times": 2})

    run = week_two(reminder, [PartSpec(media=image(2), caption="Poster 2")])

    assert (run.status, run.sent, run.failed) == (RunStatus.PARTIAL, 1, 1)
    failed = run.targets.get(status=TargetStatus.FAILED)
    assert failed.chat.telegram_id == group_id(0) and "keeps expiring" in failed.error
    assert [m["text"] for m in posts(world, group_id(0))] == ["Poster 1"]


def test_a_text_edit_answered_with_an_expired_file_fails_that_group_only(fanout_world):
    world = fanout_world(groups_world(groups=2))
    reminder = make_reminder(parts=[PartSpec(text="Week 1")])
    execute(reminder_fire(reminder=reminder))
    world.fault_add({"op": "any", "chat": group_id(0), "error": "file_reference_expired"})

    run = week_two(reminder, [PartSpec(text="Week 2")])

    assert (run.status, run.sent, run.failed) == (RunStatus.PARTIAL, 1, 1), run.error_summary
    failed = run.targets.get(status=TargetStatus.FAILED)
    assert failed.chat.telegram_id == group_id(0) and "keeps expiring" in failed.error
    assert [m["text"] for n in range(2) for m in posts(world, group_id(n))] == ["Week 1", "Week 2"]


def test_a_flood_wait_on_an_edit_is_waited_out_and_the_same_part_edited(fanout_world):
    world = fanout_world(groups_world(groups=1))
    reminder = make_reminder(parts=[PartSpec(text="Week 1")])
    execute(reminder_fire(reminder=reminder))
    world.fault_add({"op": "any", "chat": group_id(0), "error": "flood_wait", "seconds": 1})
    world.stats_reset()

    run = week_two(reminder, [PartSpec(text="Week 2")])

    assert run.status == RunStatus.SUCCESS, run.error_summary
    [post] = posts(world, group_id(0))
    assert (post["text"], post["edit_date"] is not None) == ("Week 2", True)
    made = calls(world)
    assert made["messages.editMessage"] == 2 and "messages.sendMessage" not in made
    assert AccountPaceEvent.objects.filter(account=account(), kind=PaceEventKind.FLOOD_WAIT).count() == 1


def test_peer_flood_on_an_edit_rests_the_account_and_pauses_the_run(fanout_world):
    world = fanout_world(groups_world(groups=1))
    reminder = make_reminder(parts=[PartSpec(text="Week 1")])
    execute(reminder_fire(reminder=reminder))
    world.fault_add({"op": "any", "chat": group_id(0), "error": "peer_flood", "times": 100})

    run = week_two(reminder, [PartSpec(text="Week 2")])

    assert (run.status, run.pause_cause, run.sent, run.pending) == (RunStatus.PAUSED, PauseCause.ACCOUNT_REST, 0, 1)
    assert account().is_resting and "PEER_FLOOD" in account().rests.get().reason
    assert [(m["text"], m["edit_date"]) for m in posts(world, group_id(0))] == [("Week 1", None)]


def test_edit_in_place_is_chosen_on_the_compose_page_and_in_the_api(operator, api, fanout_world):
    fanout_world(groups_world(groups=2))
    htmx_post(
        operator,
        reverse("reminders:compose"),
        compose(action="save", step="review", replace_previous="on", edit_in_place="on"),
    )
    reminder = Reminder.objects.get()
    assert (reminder.replace_previous, reminder.edit_in_place) == (True, True)
    detail = operator.get(reverse("reminders:detail", args=[reminder.pk])).content.decode()
    assert "replaces the previous run's post (edited in place where the parts allow)" in detail

    created = api.post("/api/reminders/", body(replace_previous=True, edit_in_place=True), format="json")
    assert created.status_code == 201, created.json()
    assert (created.json()["replace_previous"], created.json()["edit_in_place"]) == (True, True)
    assert reminder_fire(reminder=Reminder.objects.get(pk=created.json()["id"])).options["edit_in_place"] is True
