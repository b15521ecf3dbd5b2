"""Audiences: saved lists of an account's groups, built by filters (title, member count, type, forum) or
imported from a CSV (errors by line, nothing half-imported); a reminder targets audiences and groups, and a run
checks the members when it is made: a group the account left, or that no longer matches, is counted and never
sent to. An audience in use is not deleted."""

import pytest

from accounts.models import Chat
from accounts.services import account_refresh_chats
from core.models import RunStatus
from reminders.models import AudienceKind, TargetStatus
from reminders.services import (
    AudienceError,
    AudienceFilter,
    audience_delete,
    audience_import,
    audience_save,
    reminder_fire,
)
from tests.support.reminders import SENDER, account, execute, make_reminder, posts

pytestmark = pytest.mark.django_db

OTHER = "+15550000109"


def chat_spec(chat_id: int, title: str, **more) -> dict:
    return {"id": chat_id, "title": title, "type": "supergroup", "members": [SENDER], **more}


WORLD = {
    "accounts": [{"phone": SENDER, "code": "12345"}, {"phone": OTHER, "code": "12345"}],
    "chats": [
        chat_spec(801, "KL Buyers", other_members=120, username="klbuyers"),
        chat_spec(802, "KL Sellers", other_members=40),
        chat_spec(803, "Penang Buyers", other_members=300, forum=True, topics=[{"id": 7, "title": "Deals"}]),
        {"id": 804, "title": "KL Old group", "type": "group", "members": [SENDER], "other_members": 90},
        chat_spec(805, "KL Read only", members_can_post=False),
        {"id": 806, "title": "KL News", "type": "channel", "members": [SENDER]},
        {"id": 807, "title": "Elsewhere", "type": "supergroup", "members": [OTHER]},
    ],
}


def titles(audience) -> list[str]:
    return [member.chat.title for member in audience.members.select_related("chat").order_by("chat__title")]


def test_filters_take_the_accounts_groups_by_title_members_type_and_forum(fanout_world):
    fanout_world(WORLD)
    sender = account(SENDER)

    def built(**filters):
        return titles(audience_save(account=sender, name=str(filters), filters=AudienceFilter(**filters)))

    # channels, groups it may not post in and other accounts' groups are never members
    assert built(title_contains="kl") == ["KL Buyers", "KL Old group", "KL Sellers"]
    assert built(min_members=100) == ["KL Buyers", "Penang Buyers"]  # 120 and 300 besides the account
    assert built(min_members=50, max_members=200) == ["KL Buyers", "KL Old group"]
    assert built(chat_type="group") == ["KL Old group"]
    assert built(forum=True) == ["Penang Buyers"]
    assert built(forum=False, title_contains="buyers") == ["KL Buyers"]
    with pytest.raises(AudienceError) as refused:
        audience_save(account=sender, name="Nobody", filters=AudienceFilter(min_members=10, max_members=5))
    assert refused.value.problems == ["min_members: more than max_members; no group could match."]


def test_a_csv_import_reports_every_bad_line_and_imports_nothing(fanout_world):
    fanout_world(WORLD)
    sender = account(SENDER)
    text = "\n".join(
        [
            "# chat, topic",
            "801",
            "@KLBuyers",  # the same group again: once
            "-100803,7",
            "t.me/c/802/15",
            "https://t.me/nobody_here",
            "805",
            "807",
            "804,3",
            "hello there",
            "¹",  # str.isdigit takes it, int() does not
            "--801",
            "801,¹",
        ]
    )

    with pytest.raises(AudienceError) as refused:
        audience_import(account=sender, name="Imported", text=text)

    assert [problem.split(":")[0] for problem in refused.value.problems] == [
        "line 6",
        "line 7",
        "line 8",
        "line 9",
        "line 10",
        "line 11",
        "line 12",
        "line 13",
    ]
    assert "“KL Old group” is not a forum" in refused.value.problems[3]
    assert "not a chat id, an @username or a t.me link" in refused.value.problems[4]
    assert "not a chat id" in refused.value.problems[5] and "not a chat id" in refused.value.problems[6]
    assert "is not a topic id" in refused.value.problems[7]
    assert not sender.audiences.exists()

    audience = audience_import(account=sender, name="Imported", text="\n".join(text.splitlines()[:5]))
    assert audience.kind == AudienceKind.LIST
    members = [(m.chat.telegram_id, m.topic_id) for m in audience.members.select_related("chat")]
    assert members == [(801, None), (803, 7), (802, None)]


def test_a_run_skips_a_group_the_account_left_and_one_no_longer_matching(fanout_world):
    world = fanout_world(WORLD)
    sender = account(SENDER)
    kl = audience_save(account=sender, name="KL", filters=AudienceFilter(title_contains="KL"))
    imported = audience_import(account=sender, name="Penang", text="803,7\n801")
    reminder = make_reminder(chats=[], audiences=[kl, imported])
    world.member_set(804, SENDER, member=False)  # the account left the old group
    account_refresh_chats(account=sender)
    Chat.objects.filter(telegram_id=802).update(title="Sellers (closed)")  # renamed: KL no longer matches it

    run = execute(reminder_fire(reminder=reminder))

    assert run.status == RunStatus.SUCCESS, run.error_summary
    assert (run.total, run.sent, run.skipped, run.failed) == (4, 2, 2, 0)
    by_chat = {(t.chat.telegram_id, t.topic_id): (t.status, t.error) for t in run.targets.select_related("chat")}
    assert by_chat == {
        (801, None): (TargetStatus.SENT, ""),  # in both audiences: once
        (803, 7): (TargetStatus.SENT, ""),
        (802, None): (TargetStatus.SKIPPED, "Skipped: no longer in audience."),
        (804, None): (TargetStatus.SKIPPED, "Skipped: not a member."),
    }
    assert posts(world, 802) == [] and posts(world, 804) == []
    assert [m["topic"] for m in posts(world, 803)] == [7]


def test_an_audience_used_by_reminders_is_not_deleted_and_says_by_which(fanout_world):
    fanout_world(WORLD)
    sender = account(SENDER)
    audience = audience_save(account=sender, name="KL", filters=AudienceFilter(title_contains="KL"))
    make_reminder(name="Weekly promo", chats=[], audiences=[audience])
    make_reminder(name="Flash sale", chats=[], audiences=[audience])

    with pytest.raises(AudienceError) as refused:
        audience_delete(audience=audience)

    assert refused.value.problems == ["“KL” is used by “Flash sale”, “Weekly promo”: remove it from them first."]
    unused = audience_save(account=sender, name="Unused", filters=AudienceFilter())
    audience_delete(audience=unused)
    assert list(sender.audiences.values_list("name", flat=True)) == ["KL"]
