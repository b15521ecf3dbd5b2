"""The Channels page's "Add channels" card and the channel page's Leave: HTMX partials that keep what was typed
and say what went wrong; viewers see none of it and change nothing."""

import pytest

from accounts.models import TelegramAccount
from ingestion.models import Channel
from tests.support.onboarding import CLUB_INVITE, FRESH, MODELS_A, NEWCOMER, READER, SHY, WRITER, onboarding_world

pytestmark = pytest.mark.django_db(transaction=True)
HTMX = {"HTTP_HX_REQUEST": "true"}


def pk(phone: str) -> int:
    return TelegramAccount.objects.get(phone=phone).pk


def test_an_operator_previews_then_joins_and_the_table_gains_the_channel(operator, ingest_world):
    world = ingest_world(onboarding_world())
    page = operator.get("/channels/")
    assert "Add channels" in page.content.decode() and "Create destination channel" in page.content.decode()

    preview = operator.post("/channels/join/preview/", {"account": pk(NEWCOMER), "link": CLUB_INVITE}, **HTMX)
    joined = operator.post("/channels/join/", {"account": pk(NEWCOMER), "link": CLUB_INVITE}, **HTMX)

    text = preview.content.decode()
    assert "Prints club" in text and "41" in text and "not shown before joining" in text
    assert 'value="https://t.me/+ClubInvite01"' in text, "the link stays in the field"
    assert ">Join<" in text
    result = joined.content.decode()
    assert "Newcomer: Joined" in result and "Prints club" in result
    assert 'id="channel-rows" hx-swap-oob="true"' in result, "the table is redrawn with the new reader"
    assert world.membership(5002, NEWCOMER) == "member"


def test_a_bad_link_is_shown_under_the_field_with_what_was_typed(operator, ingest_world):
    ingest_world(onboarding_world())

    expired = operator.post(
        "/channels/join/preview/", {"account": pk(NEWCOMER), "link": "https://t.me/+OldInvite001"}, **HTMX
    )
    garbled = operator.post("/channels/join/", {"account": pk(NEWCOMER), "link": "t.me/+abc"}, **HTMX)

    assert "This invite link has expired or was revoked" in expired.content.decode()
    assert 'value="https://t.me/+OldInvite001"' in expired.content.decode()
    assert "is not a whole invite link" in garbled.content.decode()
    assert 'class="field has-error"' in garbled.content.decode()


def test_joining_the_sources_lists_each_outcome(operator, ingest_world):
    ingest_world(onboarding_world())

    response = operator.post("/channels/join-sources/", {"account": pk(NEWCOMER)}, **HTMX)

    text = response.content.decode()
    assert "<strong>Models A</strong>: Joined" in text
    assert "<strong>Prints club</strong>: Failed" in text and "no invite link is known here" in text


def test_the_destination_is_created_from_a_dialog_with_each_writer_told(operator, ingest_world):
    world = ingest_world(onboarding_world())

    dialog = operator.get("/channels/create-destination/", **HTMX)
    empty = operator.post("/channels/create-destination/", {"account": pk(READER), "title": ""}, **HTMX)
    created = operator.post(
        "/channels/create-destination/",
        {"account": pk(READER), "title": "Stash archive", "writers": [pk(WRITER), pk(SHY)]},
        **HTMX,
    )

    assert "Create the destination channel" in dialog.content.decode()
    assert "Give the new channel a title." in empty.content.decode()
    text = created.content.decode()
    assert "Stash archive is the destination" in text
    assert "added as an admin who posts" in text and "privacy settings" in text
    destination = Channel.objects.get(is_destination=True)
    assert world.membership(destination.telegram_id, WRITER) == "admin"


def test_leaving_from_the_channel_page(operator, ingest_world):
    world = ingest_world(onboarding_world())
    channel = Channel.objects.get(chat__telegram_id=MODELS_A)
    assert "Leave channel" in operator.get(f"/channels/{channel.pk}/").content.decode()

    response = operator.post(f"/channels/{channel.pk}/leave/", {"account": pk(READER)}, follow=True)

    assert "Reader left Models A; it no longer reads it." in response.content.decode()
    assert world.membership(MODELS_A, READER) is None


def test_viewers_see_no_onboarding_and_cannot_post_it(client, django_user_model, ingest_world):
    world = ingest_world(onboarding_world())
    client.force_login(django_user_model.objects.create_user("viewer", password="v1ew-pass"))
    channel = Channel.objects.get(chat__telegram_id=MODELS_A)

    assert "Add channels" not in client.get("/channels/").content.decode()
    assert "Leave channel" not in client.get(f"/channels/{channel.pk}/").content.decode()
    for path, body in (
        ("/channels/join/preview/", {"account": pk(NEWCOMER), "link": "@fresh_finds"}),
        ("/channels/join/", {"account": pk(NEWCOMER), "link": "@fresh_finds"}),
        ("/channels/join-sources/", {"account": pk(NEWCOMER)}),
        ("/channels/create-destination/", {"account": pk(READER), "title": "X"}),
        (f"/channels/{channel.pk}/leave/", {"account": pk(READER)}),
    ):
        assert client.post(path, body).status_code == 403, path
    assert world.membership(FRESH, NEWCOMER) is None and world.membership(MODELS_A, READER) == "member"
