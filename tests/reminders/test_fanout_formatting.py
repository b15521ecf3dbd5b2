"""Formatted parts and albums through the fan-out: every group gets the text and its entities, and each album
as one, as the sandbox records them."""

import pytest

from core.models import RunStatus
from reminders.services import PartSpec, reminder_fire
from tests.support.reminders import SENDER, account, execute, group_id, groups_world, image, make_reminder, posts

pytestmark = pytest.mark.django_db


def test_every_group_gets_the_formatted_text_and_caption(fanout_world):
    world = fanout_world(groups_world(groups=3))
    reminder = make_reminder(
        parts=[
            PartSpec(text="🎉 **Sale** today: [shop](https://shop.example)", format="markdown"),
            PartSpec(media=image(), caption="<i>This week</i> <tg-spoiler>-30%</tg-spoiler>", format="html"),
            PartSpec(text="Plain **stays** plain"),
        ]
    )

    run = execute(reminder_fire(reminder=reminder))

    assert run.status == RunStatus.SUCCESS, run.error_summary
    assert [part["format"] for part in run.parts] == ["markdown", "html", "plain"]
    for n in range(3):
        text, caption, plain = posts(world, group_id(n))
        assert text["text"] == "🎉 Sale today: shop"
        assert text["entities"] == [
            {"type": "bold", "offset": 3, "length": 4},
            {"type": "text_url", "offset": 15, "length": 4, "url": "https://shop.example"},
        ]
        assert caption["text"] == "This week -30%" and caption["photo"] is not None
        assert caption["entities"] == [
            {"type": "italic", "offset": 0, "length": 9},
            {"type": "spoiler", "offset": 10, "length": 4},
        ]
        assert (plain["text"], plain["entities"]) == ("Plain **stays** plain", [])


def test_a_run_fired_before_formats_existed_sends_its_parts_plain(fanout_world):
    world = fanout_world(groups_world(groups=1))
    reminder = make_reminder(parts=[PartSpec(text="**as written**")])
    run = reminder_fire(reminder=reminder)
    run.parts = [{"text": "**as written**", "media": None, "caption": ""}]  # the snapshot of an older version
    run.save(update_fields=["parts"])

    run = execute(run)

    assert run.status == RunStatus.SUCCESS, run.error_summary
    [message] = posts(world, group_id(0))
    assert (message["text"], message["entities"]) == ("**as written**", [])


def test_custom_emoji_stop_the_run_when_the_account_lost_premium(fanout_world):
    world = fanout_world(groups_world(groups=2))
    sender = account()
    sender.is_premium = True
    sender.save(update_fields=["is_premium"])
    emoji = 'New <tg-emoji emoji-id="5368324170671202286">👍</tg-emoji>'
    reminder = make_reminder(parts=[PartSpec(text=emoji, format="html")])
    run = reminder_fire(reminder=reminder)
    sender.is_premium = False
    sender.save(update_fields=["is_premium"])

    run = execute(run)

    assert run.status == RunStatus.FAILED and run.sent == 0 and run.pending == 2
    assert "Custom emoji at line 1, column 5 (near “👍”) need a Premium account" in run.error_summary
    assert posts(world, group_id(0)) == [] and posts(world, group_id(1)) == []


def test_an_album_goes_to_every_group_as_one_album_uploaded_once(fanout_world):
    world = fanout_world(groups_world(groups=4))
    photos = [image(seed) for seed in (1, 2, 3)]
    reminder = make_reminder(
        parts=[
            PartSpec(text="**New** this week", format="markdown"),
            PartSpec(album=photos, caption="<b>Three</b> kits", format="html"),
        ]
    )

    run = execute(reminder_fire(reminder=reminder))

    assert run.status == RunStatus.SUCCESS, run.error_summary
    assert run.parts[1]["album"] == [photo.pk for photo in photos]
    calls = world.stats()["calls"][SENDER]
    assert calls["messages.uploadMedia"] == 3  # each photo once for the whole run
    assert calls["messages.sendMultiMedia"] == 4  # one album per group
    grouped = set()
    for n in range(4):
        text, *album = posts(world, group_id(n))
        assert text["entities"] == [{"type": "bold", "offset": 0, "length": 3}]
        assert [message["photo"]["sha256"] for message in album] == [photo.sha256 for photo in photos]
        assert [message["text"] for message in album] == ["Three kits", "", ""]
        assert album[0]["entities"] == [{"type": "bold", "offset": 0, "length": 5}]
        assert len({message["grouped_id"] for message in album}) == 1
        grouped.add(album[0]["grouped_id"])
    assert len(grouped) == 4  # each group's album is its own


def test_a_resent_album_posts_nothing_twice(fanout_world):
    world = fanout_world(groups_world(groups=1))
    reminder = make_reminder(parts=[PartSpec(album=[image(1), image(2)])])
    run = execute(reminder_fire(reminder=reminder))
    target = run.targets.get()
    # as if the worker died after Telegram posted the album but before the part was recorded
    target.status, target.parts_sent = "pending", 0
    target.save(update_fields=["status", "parts_sent"])
    run.status, run.pending, run.sent = RunStatus.QUEUED, 1, 0
    run.save(update_fields=["status", "pending", "sent"])

    run = execute(run)

    assert run.status == RunStatus.SUCCESS, run.error_summary
    assert len(posts(world, group_id(0))) == 2
