"""Send me a test: the reminder's parts at once to the account's Saved Messages (or one of its chats), as groups
get them, outside the window and the run accounting; refused in words when the account may not send."""

from datetime import UTC, datetime

import pytest
from django.contrib.auth.models import Group
from rest_framework.test import APIClient

from accounts import pace
from accounts.models import AccountSendMinute
from core.roles import OPERATORS_GROUP
from reminders.models import ReminderRun
from reminders.services import PartSpec
from tests.support.reminders import (
    KL,
    KL_AFTER_CLOSE,
    SENDER,
    account,
    group_id,
    groups_world,
    image,
    make_reminder,
    posts,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(fanout_world):
    return fanout_world(groups_world(groups=2))


def saved_messages(world) -> list[dict]:
    """What the account sent to itself, as `sandbox_dump <its user id>` shows it."""
    return posts(world, world.account(SENDER)["user_id"])


def formatted_reminder():
    return make_reminder(
        timezone=KL,
        start=9,
        end=18,
        parts=[
            PartSpec(text="🎉 **Sale** today: [shop](https://shop.example)", format="markdown"),
            PartSpec(album=[image(1), image(2)], caption="<b>Two</b> kits", format="html"),
        ],
    )


def test_a_test_goes_to_saved_messages_formatted_with_its_album_outside_the_window_uncounted(api, world, at):
    reminder = formatted_reminder()
    at(KL_AFTER_CLOSE)  # 18:00:01 in Kuala Lumpur: the delivery window is closed

    response = api.post(f"/api/reminders/{reminder.pk}/test-send/", {}, format="json")

    assert response.status_code == 200, response.json()
    assert response.json() == {
        "where": "Saved Messages",
        "at": "2026-11-25T10:00:01Z",
        "messages": 3,
        "message": "Sent to Saved Messages at 18:00 (Asia/Kuala_Lumpur), outside the delivery window 09:00–18:00: "
        "a test goes out at any hour, and counts in no run.",
    }
    text, first, second = saved_messages(world)
    assert text["text"] == "🎉 Sale today: shop"
    assert text["entities"] == [
        {"type": "bold", "offset": 3, "length": 4},
        {"type": "text_url", "offset": 15, "length": 4, "url": "https://shop.example"},
    ]
    assert first["grouped_id"] is not None and first["grouped_id"] == second["grouped_id"]
    assert (first["text"], first["entities"]) == ("Two kits", [{"type": "bold", "offset": 0, "length": 3}])
    assert first["photo"] is not None and second["photo"] is not None
    assert posts(world, group_id(0)) == [] and posts(world, group_id(1)) == []
    assert not ReminderRun.objects.exists()
    assert not AccountSendMinute.objects.exists()
    # Saved Messages is not one of the chats the account lists.
    assert [chat["id"] for chat in world.account_chats(SENDER)] == [group_id(0), group_id(1)]


def test_a_test_goes_to_a_chosen_chat_of_the_account(api, world):
    reminder = make_reminder(parts=[PartSpec(text="Check this")])

    response = api.post(f"/api/reminders/{reminder.pk}/test-send/", {"chat": group_id(1)}, format="json")

    assert response.status_code == 200, response.json()
    assert response.json()["where"] == "“Group 0001”"
    assert [message["text"] for message in posts(world, group_id(1))] == ["Check this"]
    assert saved_messages(world) == [] and posts(world, group_id(0)) == []


def test_a_chat_not_the_accounts_is_refused_in_words(api, world):
    reminder = make_reminder(parts=[PartSpec(text="Check this")])

    response = api.post(f"/api/reminders/{reminder.pk}/test-send/", {"chat": 424242}, format="json")

    assert response.status_code == 400
    assert response.json()["message"] == (
        f"{account()} is not in chat 424242; pick one of its chats, or none for Saved Messages."
    )
    assert response.json()["errors"] == {"chat": [response.json()["message"]]}
    assert saved_messages(world) == []


def test_viewers_cannot_send_a_test(world, django_user_model):
    reminder = make_reminder(parts=[PartSpec(text="Check this")])
    client = APIClient()
    client.force_authenticate(django_user_model.objects.create_user(username="viewer", password="v1ew-pass"))

    response = client.post(f"/api/reminders/{reminder.pk}/test-send/", {}, format="json")

    assert response.status_code == 403 and response.json()["message"]
    assert saved_messages(world) == []


def test_a_resting_or_stopped_account_sends_no_test_and_says_why(api, world):
    reminder = make_reminder(parts=[PartSpec(text="Check this")])
    pace.account_rest(account=account(), reason="PEER_FLOOD")

    resting = api.post(f"/api/reminders/{reminder.pk}/test-send/", {}, format="json")

    assert resting.status_code == 409
    assert resting.json()["message"].startswith(f"No test sent: {account()} is resting until ")
    pace.account_rest_end_now(account=account())
    pace.account_sending_set(account=account(), stopped=True)

    stopped = api.post(f"/api/reminders/{reminder.pk}/test-send/", {}, format="json")

    assert stopped.status_code == 409
    assert stopped.json()["message"].startswith(f"No test sent: Sending is stopped for {account()}")
    assert saved_messages(world) == []


def test_a_floodwait_holding_the_account_holds_the_test(api, world):
    reminder = make_reminder(parts=[PartSpec(text="Check this")])
    pace.account_bucket(account=account()).pause(600)

    response = api.post(f"/api/reminders/{reminder.pk}/test-send/", {}, format="json")

    assert response.status_code == 409
    message = response.json()["message"]
    assert message.startswith(f"No test sent: a FloodWait holds {account()} for ") and message.endswith(
        " s more; try again after."
    )
    assert saved_messages(world) == []


def test_a_floodwait_answered_to_the_test_holds_the_account_for_its_runs_too(api, fanout_world):
    fault = {"op": "send", "error": "flood_wait", "seconds": 300, "times": 1}
    world = fanout_world(groups_world(groups=1, faults=[fault]))
    reminder = make_reminder(parts=[PartSpec(text="Check this")])

    response = api.post(f"/api/reminders/{reminder.pk}/test-send/", {}, format="json")

    assert response.status_code == 409
    assert response.json()["message"] == (
        f"No test sent: Telegram asked {account()} to wait 300 s (FLOOD_WAIT); its runs wait too."
    )
    assert pace.account_bucket(account=account()).state().wait > 290
    assert saved_messages(world) == []


def test_the_page_offers_it_to_operators_and_says_where_and_when(client, world, at, django_user_model):
    reminder = formatted_reminder()
    at(datetime(2026, 11, 25, 14, 2, tzinfo=UTC))
    user = django_user_model.objects.create_user(username="viewer", password="v1ew-pass")
    client.force_login(user)
    assert "Send me a test" not in client.get(f"/reminders/{reminder.pk}/").content.decode()
    user.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    assert "Send me a test" in client.get(f"/reminders/{reminder.pk}/").content.decode()

    answer = client.post(f"/reminders/{reminder.pk}/test-send/", headers={"HX-Request": "true"})

    assert answer.status_code == 200
    html = answer.content.decode()
    assert (
        "Sent to Saved Messages at 22:02 (Asia/Kuala_Lumpur), outside the delivery window 09:00–18:00: a test goes "
        "out at any hour, and counts in no run." in html
    )
    assert 'class="test-send"' in html and "<html" not in html
    assert len(saved_messages(world)) == 3


def test_a_test_inside_the_window_does_not_say_outside(api, world, at):
    reminder = make_reminder(parts=[PartSpec(text="Hello")])  # 00–24 UTC: always inside
    at(datetime(2026, 11, 25, 14, 2, tzinfo=UTC))

    message = api.post(f"/api/reminders/{reminder.pk}/test-send/", {}, format="json").json()["message"]

    assert message == "Sent to Saved Messages at 14:02 (UTC). A test counts in no run."
