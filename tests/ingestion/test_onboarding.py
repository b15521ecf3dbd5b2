"""Onboarding from the console, as services: an account previews and joins a channel by @username or invite
link, leaves one, creates the destination with its writers, and a new account joins the channels the others
read, each outcome reported. Real PostgreSQL, the real Telethon client, the sandbox server."""

import pytest
from django.core.exceptions import ValidationError

from accounts.models import AccountChat, TelegramAccount
from ingestion import services
from ingestion.models import AccountChannelMap, Channel, MapRole
from telegram.records import ChatPreview
from tests.support.onboarding import (
    CLUB_INVITE,
    FRESH,
    MODELS_A,
    NEWCOMER,
    PRINTS_CLUB,
    READER,
    SHY,
    VETTED,
    WRITER,
    onboarding_world,
)
from tests.support.sandbox import ref

pytestmark = pytest.mark.django_db(transaction=True)


def account(phone: str) -> TelegramAccount:
    return TelegramAccount.objects.get(phone=phone)


def test_a_public_channel_is_previewed_then_joined_and_read_by_the_account(ingest_world):
    world = ingest_world(onboarding_world())

    preview = services.chat_preview(account=account(NEWCOMER), link="t.me/fresh_finds")
    outcome = services.channel_join(account=account(NEWCOMER), link="@fresh_finds")

    assert preview == ChatPreview(
        title="Fresh finds", type="channel", members_count=9, forum=False, already_member=False, username="fresh_finds"
    )
    assert (outcome.status, outcome.title) == ("joined", "Fresh finds")
    channel = Channel.objects.get(chat__telegram_id=FRESH)
    assert outcome.channel == channel and not channel.is_active, "scanning stays the operator's to switch on"
    assert channel.chat.username == "fresh_finds"
    assert list(channel.maps.values_list("account__phone", "role")) == [(NEWCOMER, MapRole.READER)]
    link = AccountChat.objects.get(account__phone=NEWCOMER, chat=channel.chat)
    assert link.ref == ref(NEWCOMER, FRESH), "the account's own access hash is stored"
    assert world.membership(FRESH, NEWCOMER) == "member"


def test_joining_by_invite_remembers_the_link_for_the_other_accounts(ingest_world):
    ingest_world(onboarding_world())

    preview = services.chat_preview(account=account(NEWCOMER), link=CLUB_INVITE)
    outcome = services.channel_join(account=account(NEWCOMER), link=CLUB_INVITE)

    assert (preview.title, preview.forum, preview.members_count) == ("Prints club", None, 41)
    assert outcome.status == "joined"
    chat = outcome.channel.chat
    assert (chat.is_forum, chat.invite_hash) == (True, "ClubInvite01")
    assert outcome.channel.is_active, "it was a source already"


@pytest.mark.parametrize(
    ("link", "words"),
    [
        ("https://t.me/+OldInvite001", "expired or was revoked"),
        ("@nobody_here", "No channel or group has this @username"),
        ("https://example.com/x", "not a Telegram link"),
        ("", "Paste a @username or a t.me link"),
    ],
)
def test_a_link_that_leads_nowhere_is_bad_input_on_the_link(ingest_world, link, words):
    ingest_world(onboarding_world())

    for attempt in (services.chat_preview, services.channel_join):
        with pytest.raises(ValidationError) as caught:
            attempt(account=account(NEWCOMER), link=link)
        assert words in caught.value.message_dict["link"][0]
    assert not AccountChat.objects.filter(account__phone=NEWCOMER).exists()


def test_a_channel_that_approves_members_leaves_a_join_request(ingest_world):
    world = ingest_world(onboarding_world())

    outcome = services.channel_join(account=account(NEWCOMER), link="@vetted_models")

    assert (outcome.status, outcome.channel) == ("requested", None)
    assert "admins must approve" in outcome.status_label
    assert world.join_requests(VETTED) == [NEWCOMER]
    assert not Channel.objects.filter(chat__telegram_id=VETTED).exists()


def test_leaving_takes_the_account_out_on_telegram_and_here(ingest_world):
    world = ingest_world(onboarding_world())
    channel = Channel.objects.get(chat__telegram_id=MODELS_A)

    assert services.channel_leave(channel=channel, account=account(READER)) is True

    assert world.membership(MODELS_A, READER) is None
    assert not AccountChannelMap.objects.filter(channel=channel).exists()
    assert not AccountChat.objects.filter(chat=channel.chat).exists()
    with pytest.raises(ValidationError, match="is not in Models A"):
        services.channel_leave(channel=channel, account=account(READER))


def test_the_destination_is_created_with_its_writers_and_a_refusal_is_reported(ingest_world):
    world = ingest_world(onboarding_world())

    created = services.destination_create(
        account=account(READER), title="  Stash archive ", writers=[account(WRITER), account(SHY), account(READER)]
    )

    channel = created.channel
    assert channel.is_destination and channel.title == "Stash archive"
    assert [(writer.phone, error) for writer, error in created.writers] == [
        (WRITER, ""),
        (
            SHY,
            "That account's privacy settings do not let others add it to channels; allow it in its Telegram "
            "privacy settings (Invites), then try again.",
        ),
    ]
    assert sorted(channel.maps.filter(role=MapRole.WRITER).values_list("account__phone", flat=True)) == [
        READER,
        WRITER,
    ]
    assert world.membership(channel.telegram_id, READER) == "admin"
    assert world.membership(channel.telegram_id, WRITER) == "admin"
    assert AccountChat.objects.get(account__phone=WRITER, chat=channel.chat).ref == ref(WRITER, channel.telegram_id)
    with pytest.raises(ValidationError, match="uploads to Stash archive, the destination"):
        services.channel_leave(channel=channel, account=account(WRITER))


def test_a_destination_needs_a_title(ingest_world):
    ingest_world(onboarding_world())

    with pytest.raises(ValidationError) as caught:
        services.destination_create(account=account(READER), title="   ", writers=[])
    assert caught.value.message_dict == {"title": ["Give the new channel a title."]}


def test_a_new_account_joins_the_sources_the_others_read_each_outcome_told(ingest_world):
    world = ingest_world(onboarding_world())

    first = services.account_join_sources(account=account(NEWCOMER))
    services.channel_join(account=account(WRITER), link=CLUB_INVITE)  # now an invite of the club is known
    second = services.account_join_sources(account=account(NEWCOMER))

    assert [(o.title, o.status) for o in first] == [("Models A", "joined"), ("Prints club", "failed")]
    assert "no public @username and no invite link" in first[1].message
    assert [(o.title, o.status) for o in second] == [("Prints club", "joined")], "Models A is read already"
    assert world.membership(MODELS_A, NEWCOMER) == world.membership(PRINTS_CLUB, NEWCOMER) == "member"
    assert set(
        AccountChannelMap.objects.filter(account__phone=NEWCOMER).values_list("channel__chat__telegram_id", flat=True)
    ) == {
        MODELS_A,
        PRINTS_CLUB,
    }


def test_a_flood_wait_leaves_the_remaining_sources_for_later(ingest_world):
    data = onboarding_world()
    data["chats"][1]["username"] = "prints_club"
    data["faults"] = [{"op": "join", "account": NEWCOMER, "error": "flood_wait", "seconds": 300}]
    world = ingest_world(data)

    outcomes = services.account_join_sources(account=account(NEWCOMER))

    assert [(o.title, o.status) for o in outcomes] == [("Models A", "failed"), ("Prints club", "not_tried")]
    assert "wait 300 s" in outcomes[0].message and outcomes[1].message.startswith("Left for later: Telegram asks")
    assert world.stats()["calls"][NEWCOMER].get("channels.joinChannel", 0) == 0
