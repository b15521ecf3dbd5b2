"""A target whose basic group Telegram upgraded to a supergroup is followed there: the part goes to the
supergroup, the chat row is linked, the reminder's target moves, the operator is told once. A group that is gone,
or became a supergroup the account is not in, fails saying which and why."""

import pytest

from accounts.models import AccountChat, Chat
from accounts.services import account_refresh_chats
from core.models import Notification, RunStatus
from reminders.models import TargetStatus
from reminders.services import GROUP_MIGRATED, reminder_fire
from tests.support.reminders import SENDER, SENDER_B, account, execute, make_reminder, posts

pytestmark = pytest.mark.django_db

CLUB, CLUB_SUPERGROUP, PLAIN, PRIVATE_SUPERGROUP = 810_001, 810_002, 810_003, 810_004


def world_data() -> dict:
    return {
        "accounts": [
            {"phone": SENDER, "first_name": "Sender 0"},
            {"phone": SENDER_B, "first_name": "Sender 1"},
        ],
        "chats": [
            {"id": CLUB, "title": "Club", "type": "group", "members": [SENDER, SENDER_B]},
            {"id": CLUB_SUPERGROUP, "title": "Club (supergroup)", "type": "supergroup", "members": [SENDER]},
            {"id": PLAIN, "title": "Plain", "type": "group", "members": [SENDER]},
            {"id": PRIVATE_SUPERGROUP, "title": "Hidden", "type": "supergroup", "members": [SENDER_B]},
        ],
    }


def chat(telegram_id: int) -> Chat:
    return Chat.objects.get(telegram_id=telegram_id)


def test_a_migrated_group_is_followed_to_its_supergroup_and_the_operator_told_once(fanout_world):
    world = fanout_world(world_data())
    reminder = make_reminder(chats=[chat(CLUB), chat(PLAIN)])
    world.chat_migrate(CLUB, CLUB_SUPERGROUP)

    run = execute(reminder_fire(reminder=reminder))

    assert (run.status, run.sent, run.failed) == (RunStatus.SUCCESS, 2, 0), run.error_summary
    assert [m["text"] for m in posts(world, CLUB_SUPERGROUP)] == ["Hello groups"]
    assert posts(world, CLUB) == []
    assert chat(CLUB).migrated_to == chat(CLUB_SUPERGROUP)
    assert sorted(reminder.targets.values_list("chat__telegram_id", flat=True)) == [CLUB_SUPERGROUP, PLAIN]
    assert run.targets.get(chat__telegram_id=CLUB_SUPERGROUP).status == TargetStatus.SENT

    again = execute(reminder_fire(reminder=reminder, again=True))

    assert again.status == RunStatus.SUCCESS
    assert len(posts(world, CLUB_SUPERGROUP)) == 2 and posts(world, CLUB) == []
    told = Notification.objects.filter(type=GROUP_MIGRATED)
    assert told.count() == 1 and told.get().count == 1
    assert told.get().title == "“Club” became a supergroup"


def test_a_reminder_already_aimed_at_the_supergroup_keeps_one_target(fanout_world):
    world = fanout_world(world_data())
    reminder = make_reminder(chats=[chat(CLUB), chat(CLUB_SUPERGROUP)])
    world.chat_migrate(CLUB, CLUB_SUPERGROUP)

    execute(reminder_fire(reminder=reminder))

    assert list(reminder.targets.values_list("chat__telegram_id", flat=True)) == [CLUB_SUPERGROUP]


def test_a_supergroup_the_account_is_not_in_fails_the_target_saying_so(fanout_world):
    world = fanout_world(world_data())
    reminder = make_reminder(phone=SENDER_B, chats=[chat(CLUB)])
    world.chat_migrate(CLUB, CLUB_SUPERGROUP)

    run = execute(reminder_fire(reminder=reminder))

    failed = run.targets.get()
    assert (run.status, failed.status) == (RunStatus.FAILED, TargetStatus.FAILED)
    assert failed.error.startswith("“Club” was upgraded to a supergroup that Sender 1 is not in (CHANNEL_PRIVATE)")
    assert chat(CLUB).migrated_to is None and not Notification.objects.filter(type=GROUP_MIGRATED).exists()


def test_a_group_the_account_was_removed_from_fails_saying_so_and_is_not_followed(fanout_world):
    fanout_world(world_data())
    plain = chat(PLAIN)
    AccountChat.objects.create(
        account=account(SENDER_B), chat=plain, can_post=True
    )  # known before it was removed from the group
    reminder = make_reminder(phone=SENDER_B, chats=[plain])

    run = execute(reminder_fire(reminder=reminder))

    failed = run.targets.get()
    assert failed.status == TargetStatus.FAILED
    assert failed.error == (
        "Sender 1 can no longer see “Plain” (CHAT_ID_INVALID): it was removed from the group, or the group was "
        "deleted; add it again, or remove the group from the reminder."
    )
    assert chat(PLAIN).migrated_to is None


def test_a_migrated_group_is_followed_after_a_chat_refresh_dropped_it(fanout_world):
    world = fanout_world(world_data())
    reminder = make_reminder(chats=[chat(CLUB)])
    world.chat_migrate(CLUB, CLUB_SUPERGROUP)
    account_refresh_chats(account=account())
    assert not AccountChat.objects.filter(account=account(), chat=chat(CLUB)).exists(), "deactivated: not listed"

    run = execute(reminder_fire(reminder=reminder))

    assert (run.status, run.sent) == (RunStatus.SUCCESS, 1), run.error_summary
    assert [m["text"] for m in posts(world, CLUB_SUPERGROUP)] == ["Hello groups"]


def test_a_deleted_group_fails_saying_it_takes_no_more_posts(fanout_world):
    world = fanout_world(world_data())
    reminder = make_reminder(chats=[chat(PLAIN), chat(CLUB)])
    world.chat_deactivate(PLAIN)

    run = execute(reminder_fire(reminder=reminder))

    failed = run.targets.get(status=TargetStatus.FAILED)
    assert (run.status, failed.chat.telegram_id) == (RunStatus.PARTIAL, PLAIN)
    assert failed.error == (
        "“Plain” takes no more posts from Sender 0 (CHAT_ID_INVALID) and did not become a supergroup: it was "
        "deleted or deactivated, or the account was removed; remove it from the reminder."
    )
    assert [m["text"] for m in posts(world, CLUB)] == ["Hello groups"]
