"""Reminders as the services write them: validation, the beat schedule kept in step, media, firing."""

import json
from dataclasses import replace
from datetime import UTC, datetime

import pytest
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django_celery_beat.models import PeriodicTask

from accounts.models import AccountChat, Chat
from core import task_names
from core.models import RunStatus
from reminders.models import MediaFile, ReminderRun
from reminders.selectors import account_observed_rate, reminder_spec
from reminders.services import (
    PartSpec,
    ReminderStateError,
    TargetSpec,
    media_create,
    reminder_delete,
    reminder_fire,
    reminder_update,
)
from tests.support.reminders import (
    KL,
    KL_MORNING,
    account,
    execute,
    groups_world,
    image,
    make_reminder,
    png_bytes,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(fanout_world):
    return fanout_world(groups_world(groups=3))


def errors_of(excinfo) -> dict:
    return excinfo.value.message_dict


def test_a_crontab_becomes_a_periodic_task_in_the_reminders_zone(world):
    reminder = make_reminder(timezone=KL, start=9, end=18, schedule_crontab="0 9 * * 1-5")

    task = PeriodicTask.objects.get(pk=reminder.periodic_task_id)
    assert (task.task, json.loads(task.args), task.enabled, task.one_off) == (
        task_names.REMINDER_FIRE,
        [reminder.pk],
        True,
        False,
    )
    crontab = task.crontab
    assert (crontab.minute, crontab.hour, crontab.day_of_week) == ("0", "9", "1-5")
    assert str(crontab.timezone) == KL


def test_edits_keep_the_periodic_task_in_step(world):
    reminder = make_reminder(timezone=KL, start=9, end=18, schedule_crontab="0 9 * * *")
    task_id = reminder.periodic_task_id

    reminder = reminder_update(reminder=reminder, spec=replace(reminder_spec(reminder=reminder), enabled=False))
    assert PeriodicTask.objects.get(pk=task_id).enabled is False

    spec = replace(reminder_spec(reminder=reminder), enabled=True, schedule_crontab="30 10 * * *", timezone="UTC")
    reminder = reminder_update(reminder=reminder, spec=spec)
    task = PeriodicTask.objects.get(pk=task_id)
    assert (task.enabled, task.crontab.hour, task.crontab.minute, str(task.crontab.timezone)) == (
        True,
        "10",
        "30",
        "UTC",
    )

    one_off = datetime(2027, 1, 4, 10, 0, tzinfo=UTC)
    reminder = reminder_update(
        reminder=reminder, spec=replace(reminder_spec(reminder=reminder), schedule_crontab="", schedule_at=one_off)
    )
    task = PeriodicTask.objects.get(pk=task_id)
    assert (task.crontab, task.clocked.clocked_time, task.one_off) == (None, one_off, True)

    reminder = reminder_update(reminder=reminder, spec=replace(reminder_spec(reminder=reminder), schedule_at=None))
    assert reminder.periodic_task_id is None and not PeriodicTask.objects.filter(pk=task_id).exists()


def test_deleting_a_reminder_deletes_its_schedule_keeps_its_runs_but_not_while_a_run_is_going(world):
    reminder = make_reminder(schedule_crontab="0 9 * * *")
    task_id = reminder.periodic_task_id
    run = reminder_fire(reminder=reminder, enqueue=False)

    with pytest.raises(ReminderStateError, match="cancel it first"):
        reminder_delete(reminder=reminder)

    execute(run)
    reminder_delete(reminder=reminder)
    assert not PeriodicTask.objects.filter(pk=task_id).exists()
    assert ReminderRun.objects.filter(pk=run.pk, reminder=None, status=RunStatus.SUCCESS).exists()


@pytest.mark.parametrize(
    ("changes", "field", "text"),
    [
        ({"window_start_hour": 9, "window_end_hour": 9}, "window_end_hour", "for all day choose 00:00–24:00"),
        ({"window_start_hour": 24, "window_end_hour": 6}, "window_start_hour", "from 0 to 23"),
        ({"window_end_hour": 25}, "window_end_hour", "from 1 to 24"),
        ({"timezone": "Asia/Atlantis"}, "timezone", "IANA"),
        ({"schedule_crontab": "0 7 * * *"}, "schedule", "never fires inside the delivery window 09:00–18:00"),
        ({"schedule_crontab": "every day"}, "schedule", "5 fields"),
        ({"schedule_at": datetime(2020, 1, 1, tzinfo=UTC)}, "schedule", "already passed"),
        ({"schedule_at": datetime(2027, 1, 1, 23, 0, tzinfo=UTC)}, "schedule", "07:00 (Asia/Kuala_Lumpur) is outside"),
        ({"parts": []}, "parts", "at least one part"),
        ({"parts": [PartSpec(text="   ")]}, "parts", "give a text or a media"),
        ({"parts": [PartSpec(text="x", caption="y")]}, "parts", "a caption needs a media"),
        ({"parts": [PartSpec(text="x" * 4097)]}, "parts", "Telegram allows 4,096"),
        ({"parts": [PartSpec(text="🎉" * 2049)]}, "parts", "4,098 characters as Telegram counts them"),
        ({"parts": [PartSpec(text="a\n**b", format="markdown")]}, "parts", "“**” at line 2, column 1"),
        ({"targets": []}, "targets", "at least one group"),
        ({"name": " "}, "name", "name"),
    ],
)
def test_bad_input_is_refused_naming_the_field(world, changes, field, text):
    reminder = make_reminder(timezone=KL, start=9, end=18)
    spec = replace(reminder_spec(reminder=reminder), **changes)

    with pytest.raises(ValidationError) as excinfo:
        reminder_update(reminder=reminder, spec=spec)

    assert field in errors_of(excinfo), errors_of(excinfo)
    assert text in " ".join(errors_of(excinfo)[field])


def test_targets_must_be_groups_the_account_can_post_in(world):
    reminder = make_reminder()
    spec = reminder_spec(reminder=reminder)
    stranger = Chat.objects.create(telegram_id=424242, title="Elsewhere", type="supergroup")
    mute = spec.targets[0].chat
    AccountChat.objects.filter(chat=mute).update(can_post=False)

    with pytest.raises(ValidationError) as excinfo:
        reminder_update(
            reminder=reminder,
            spec=replace(
                spec, targets=[*spec.targets, TargetSpec(chat=stranger), TargetSpec(chat=spec.targets[1].chat)]
            ),
        )

    messages = " ".join(errors_of(excinfo)["targets"])
    assert "is not in “Elsewhere” (424242); refresh its chats" in messages
    assert f"cannot post in “{mute.title}”" in messages
    assert "is listed twice" in messages

    with pytest.raises(ValidationError) as excinfo:
        reminder_update(reminder=reminder, spec=replace(spec, targets=[TargetSpec(chat=mute, topic_id=5)]))
    assert "not a forum; leave the topic empty" in " ".join(errors_of(excinfo)["targets"])


def test_the_same_bytes_are_stored_once(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    first = media_create(file=ContentFile(png_bytes(3), name="a.png"))
    again = media_create(file=ContentFile(png_bytes(3), name="b.png"))
    other = media_create(file=ContentFile(png_bytes(4), name="c.png"))

    assert first.pk == again.pk != other.pk
    assert (first.mime_type, first.size, first.name) == ("image/png", len(png_bytes(3)), "a.png")
    assert MediaFile.objects.count() == 2
    with pytest.raises(ValidationError, match="empty"):
        media_create(file=ContentFile(b"", name="empty.png"))


def test_firing_on_a_dst_day_ends_the_window_at_the_local_hour(world, at):
    reminder = make_reminder(timezone="Europe/Berlin", start=9, end=18)
    at(datetime(2026, 3, 29, 10, 0, tzinfo=UTC))  # noon, summer time since 02:00

    run = reminder_fire(reminder=reminder, enqueue=False)

    assert run.status == RunStatus.QUEUED
    assert run.window_end_at == datetime(2026, 3, 29, 16, 0, tzinfo=UTC)


def test_a_run_keeps_the_parts_it_was_fired_with(world, at):
    reminder = make_reminder(parts=[PartSpec(text="old"), PartSpec(media=image())])
    run = reminder_fire(reminder=reminder, enqueue=False)

    reminder_update(reminder=reminder, spec=replace(reminder_spec(reminder=reminder), parts=[PartSpec(text="new")]))

    assert run.parts == [
        {"text": "old", "media": None, "caption": "", "format": "plain", "album": []},
        {"text": "", "media": MediaFile.objects.get().pk, "caption": "", "format": "plain", "album": []},
    ]
    assert all(len(target.random_ids) == 2 for target in run.targets.all())


def test_the_observed_rate_comes_from_the_accounts_finished_runs(world, at):
    reminder = make_reminder(timezone=KL, start=9, end=18)
    assert account_observed_rate(account_id=account().pk) is None

    at(KL_MORNING)
    execute(reminder_fire(reminder=reminder, enqueue=False))

    rate = account_observed_rate(account_id=account().pk)
    assert rate is not None and rate > 0
