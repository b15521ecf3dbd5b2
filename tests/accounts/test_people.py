"""People an account has a private chat with: stored by the chat refresh as chats of type `user`, to send to,
and never a channel to ingest or a reminder target."""

import pytest
from django.urls import reverse

from accounts.models import AccountChat, Chat, TelegramAccount
from accounts.selectors import account_list
from accounts.services import account_refresh_chats
from ingestion.models import Channel
from ingestion.selectors import channel_list
from operations.selectors import dashboard_summary
from reminders.models import Reminder
from reminders.selectors import account_target_chats
from telegram.sandbox.world import chat_access_hash
from tests.support.ingestion import READER, WRITER, world

pytestmark = pytest.mark.django_db

DANA, CLUB = 7001, 4001
PEOPLE_WORLD = world(
    messages=[],
    more_chats=[
        {"id": CLUB, "title": "Club", "type": "supergroup", "members": [WRITER]},
        {"id": DANA, "title": "Dana", "type": "user", "username": "dana_prints", "members": [WRITER]},
    ],
)


@pytest.fixture
def loaded(ingest_world):
    return ingest_world(PEOPLE_WORLD)


def test_the_refresh_stores_a_person_as_a_user_chat_and_never_a_channel_or_a_group(loaded):
    writer = TelegramAccount.objects.get(phone=WRITER)
    dana = Chat.objects.get(telegram_id=DANA)

    assert (dana.type, dana.title, dana.username, dana.label) == ("user", "Dana", "dana_prints", "Dana (@dana_prints)")
    link = AccountChat.objects.get(account=writer, chat=dana)
    assert link.can_post and link.access_hash == chat_access_hash(phone=WRITER, chat_id=DANA, type="user")
    assert link.ref.type == "user"
    assert not Channel.objects.filter(chat=dana).exists(), "a person is never a source"
    assert dana.pk not in {channel.chat_id for channel in channel_list()}
    assert list(account_target_chats(account_id=writer.pk)) == [Chat.objects.get(telegram_id=CLUB)]
    assert account_list().get(pk=writer.pk).chats_known == 2, "the destination and Club; Dana is no chat to count"
    assert dashboard_summary().chats_known == 3


def test_the_accounts_page_says_how_many_people_the_refresh_found(loaded, admin_client):
    writer = TelegramAccount.objects.get(phone=WRITER)

    page = admin_client.post(reverse("accounts:refresh-chats", args=[writer.pk]), follow=True).content.decode()

    assert "Found 2 chats and 1 person." in page


def test_a_person_named_as_a_reminder_target_is_refused(loaded, api):
    answer = api.post(
        "/api/reminders/",
        {
            "account": TelegramAccount.objects.get(phone=WRITER).pk,
            "name": "Hello",
            "timezone": "UTC",
            "window_start_hour": 0,
            "window_end_hour": 24,
            "parts": [{"text": "Hi"}],
            "targets": [{"chat": CLUB}, {"chat": DANA}],
        },
        format="json",
    )

    assert answer.status_code == 400
    assert answer.json()["message"].startswith("targets: targets[1]: “Dana” is a person, not a group; pick a group.")
    assert not Reminder.objects.exists()


def test_a_person_whose_id_a_known_chat_has_is_left_out_and_the_chat_kept(loaded):
    # Telegram numbers people and chats apart: a supergroup another account sees may carry Dana's number.
    Chat.objects.filter(telegram_id=DANA).delete()
    other = Chat.objects.create(telegram_id=DANA, title="Lounge", type="supergroup")
    AccountChat.objects.create(account=TelegramAccount.objects.get(phone=READER), chat=other, can_post=True)

    found = account_refresh_chats(account=TelegramAccount.objects.get(phone=WRITER))

    assert (found.chats, found.people) == (2, 0)
    other.refresh_from_db()
    assert (other.type, other.title) == ("supergroup", "Lounge")
    assert not other.account_links.filter(account__phone=WRITER).exists()
