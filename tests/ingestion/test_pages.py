"""The Channels, channel detail, Runs and Skipped pages, through the Django test client on a sandbox world."""

import pytest
from django.urls import reverse

from accounts.models import AuthState, TelegramAccount
from accounts.services import account_refresh_chats
from core.models import RunStatus
from ingestion.models import (
    AccountChannelMap,
    Channel,
    IngestionRun,
    MapRole,
    SkippedPackage,
    StartPoint,
    TopicProgress,
)
from ingestion.services import channel_link_account, channel_rules_update, channel_update, channels_for_known_chats
from tests.support.ingestion import DESTINATION, READER, SOURCE, WRITER, run_cycle, world

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
FORUM = 1500
SECOND_DESTINATION = 9100
GROUP = 1600

MORE_CHATS = [
    {
        "id": FORUM,
        "title": "Makers forum",
        "type": "supergroup",
        "forum": True,
        "members": [READER],
        "topics": [{"id": 1, "title": "General"}, {"id": 42, "title": "Dragons"}],
        "messages": [
            {"id": 5, "topic": 42, "document": {"name": "wyrm.zip", "archive": [{"path": "wyrm.stl", "size": 100}]}}
        ],
    },
    {
        "id": SECOND_DESTINATION,
        "title": "Archive Two",
        "type": "channel",
        "members": [WRITER],
        "admins": [WRITER],
        "messages": [],
    },
    {"id": GROUP, "title": "Chit-chat group", "type": "group", "members": [READER], "messages": []},
]
ARCHIVES = [{"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}}]


@pytest.fixture
def setup(ingest_world):
    ingest_world(world(messages=ARCHIVES, more_chats=MORE_CHATS))
    channels_for_known_chats()


def channel(telegram_id: int) -> Channel:
    return Channel.objects.get(chat__telegram_id=telegram_id)


def htmx_post(client, url: str, data: dict | None = None) -> str:
    response = client.post(url, data or {}, **HTMX)
    assert response.status_code == 200, response.content
    return response.content.decode()


def test_every_page_needs_a_login(client, setup):
    source = channel(SOURCE)
    for url in [
        reverse("ingestion:channels"),
        reverse("ingestion:channel-detail", args=[source.pk]),
        reverse("ingestion:runs"),
        reverse("ingestion:skipped"),
    ]:
        response = client.get(url)
        assert response.status_code == 302 and response.url.startswith(reverse("login")), url


# Channels ---------------------------------------------------------------------------------------------------


def test_channels_page_lists_channels_and_supergroups_with_their_accounts(admin_client, setup):
    Channel.objects.filter(chat__telegram_id=FORUM).delete()
    # the page only reads: a missing row is made when the operator refreshes an account's chats
    account_refresh_chats(account=TelegramAccount.objects.get(phone=READER))

    html = admin_client.get(reverse("ingestion:channels")).content.decode()

    assert "Models A" in html and "Makers forum" in html and "Archive Two" in html
    assert "Chit-chat group" not in html, "basic groups are reminder targets, not sources"
    assert Channel.objects.filter(chat__telegram_id=FORUM).exists(), "a row is made for every known channel"
    assert 'class="badge badge--destination">Destination<' in html
    assert "Reader A" in html and "Writer" in html
    assert "No destination yet" not in html


def test_the_page_warns_when_there_is_no_destination(admin_client, setup):
    Channel.objects.update(is_destination=False)

    html = admin_client.get(reverse("ingestion:channels")).content.decode()

    assert "No destination yet" in html


def test_the_active_switch_swaps_the_row(admin_client, setup):
    forum = channel(FORUM)
    url = reverse("ingestion:channel-active", args=[forum.pk])

    html = htmx_post(admin_client, url, {"is_active": "on"})

    assert html.lstrip().startswith(f'<tr id="channel-{forum.pk}"')
    assert "no account reads it yet" in html
    assert Channel.objects.get(pk=forum.pk).is_active

    html = htmx_post(admin_client, url, {})
    assert "Paused: no longer scanned." in html
    assert not Channel.objects.get(pk=forum.pk).is_active


def test_the_destination_cannot_be_switched_on_as_a_source(admin_client, setup):
    destination = channel(DESTINATION)

    html = htmx_post(admin_client, reverse("ingestion:channel-active", args=[destination.pk]), {"is_active": "on"})

    assert "row-message is-error" in html and "cannot also be a source" in html
    assert not Channel.objects.get(pk=destination.pk).is_active


def test_a_negative_retention_is_refused_inside_the_row(admin_client, setup):
    source = channel(SOURCE)
    url = reverse("ingestion:channel-settings", args=[source.pk])

    html = htmx_post(admin_client, url, {"category": "Minis", "expiration_days": "-1"})

    assert 'class="field-error"' in html and "positive number of days" in html
    assert 'value="-1"' in html, "what the operator typed stays to be fixed"
    assert Channel.objects.get(pk=source.pk).expiration_days is None

    html = htmx_post(admin_client, url, {"category": "  Minis ", "expiration_days": "7"})
    assert "Saved." in html and "field-error" not in html
    saved = Channel.objects.get(pk=source.pk)
    assert (saved.category, saved.expiration_days) == ("Minis", 7)

    htmx_post(admin_client, url, {"category": "Minis", "expiration_days": ""})
    assert Channel.objects.get(pk=source.pk).expiration_days is None


@pytest.mark.parametrize("days", ["9999999", "99999999999"])
def test_a_huge_retention_is_a_field_error_not_a_500(admin_client, setup, days):
    source = channel(SOURCE)

    html = htmx_post(admin_client, reverse("ingestion:channel-settings", args=[source.pk]), {"expiration_days": days})

    assert 'class="field-error"' in html and "36500" in html
    assert f'value="{days}"' in html
    assert Channel.objects.get(pk=source.pk).expiration_days is None


def test_a_non_number_retention_is_a_field_error(admin_client, setup):
    source = channel(SOURCE)

    html = htmx_post(admin_client, reverse("ingestion:channel-settings", args=[source.pk]), {"expiration_days": "x"})

    assert 'class="field-error"' in html and "whole number" in html


def test_readers_are_added_and_removed_from_the_row(admin_client, setup):
    forum = channel(FORUM)
    reader = TelegramAccount.objects.get(phone=READER)

    html = htmx_post(admin_client, reverse("ingestion:channel-add-reader", args=[forum.pk]), {"account": reader.pk})

    assert "reads it now" in html
    assert AccountChannelMap.objects.filter(channel=forum, account=reader, role=MapRole.READER).exists()
    assert f'aria-label="Stop {reader} reading Makers forum"' in html

    html = htmx_post(admin_client, reverse("ingestion:channel-remove-reader", args=[forum.pk, reader.pk]))
    assert "no longer reads it" in html
    assert not AccountChannelMap.objects.filter(channel=forum, account=reader).exists()


def test_an_account_outside_the_channel_cannot_read_it(admin_client, setup):
    forum = channel(FORUM)
    writer = TelegramAccount.objects.get(phone=WRITER)

    html = htmx_post(admin_client, reverse("ingestion:channel-add-reader", args=[forum.pk]), {"account": writer.pk})

    assert "row-message is-error" in html and "is not in Makers forum" in html
    assert not AccountChannelMap.objects.filter(channel=forum, account=writer).exists()


def test_make_destination_asks_for_writers_then_redraws_every_row(admin_client, setup):
    second = channel(SECOND_DESTINATION)
    writer = TelegramAccount.objects.get(phone=WRITER)
    url = reverse("ingestion:channel-destination", args=[second.pk])

    dialog = admin_client.get(url, **HTMX).content.decode()
    assert "<dialog" in dialog and "Make Archive Two the destination" in dialog
    assert "It replaces <strong>Archive</strong>" in dialog
    assert f'value="{writer.pk}"' in dialog and "checked" in dialog

    refused = htmx_post(admin_client, url, {})
    assert "<dialog" in refused and "Choose at least one account" in refused
    assert not Channel.objects.get(pk=second.pk).is_destination

    done = htmx_post(admin_client, url, {"writers": [writer.pk]})
    assert "<dialog" not in done
    assert '<tbody id="channel-rows" hx-swap-oob="true">' in done
    assert Channel.objects.get(pk=second.pk).is_destination
    assert not channel(DESTINATION).is_destination
    assert AccountChannelMap.objects.filter(channel=second, account=writer, role=MapRole.WRITER).exists()


def test_a_channel_nobody_can_post_in_cannot_be_the_destination(admin_client, setup):
    source = channel(SOURCE)
    reader = TelegramAccount.objects.get(phone=READER)
    url = reverse("ingestion:channel-destination", args=[source.pk])

    dialog = admin_client.get(url, **HTMX).content.decode()
    assert "No account can post in Models A" in dialog

    refused = htmx_post(admin_client, url, {"writers": [reader.pk]})
    assert "<dialog" in refused and "No account can post in Models A" in refused
    assert channel(DESTINATION).is_destination


def test_channel_detail_shows_accounts_topics_and_the_last_error(admin_client, setup):
    forum = channel(FORUM)
    reader = TelegramAccount.objects.get(phone=READER)
    channel_link_account(channel=forum, account=reader)
    channel_rules_update(channel=forum, start_from=StartPoint.HISTORY)  # a new channel starts from now
    channel_update(channel=forum, is_active=True)
    run_cycle()
    Channel.objects.filter(pk=forum.pk).update(last_error="Reader A: CHANNEL_PRIVATE")

    html = admin_client.get(reverse("ingestion:channel-detail", args=[forum.pk])).content.decode()

    assert "Makers forum" in html and "Reader A: CHANNEL_PRIVATE" in html
    assert "Dragons" in html and "General" in html
    dragons = TopicProgress.objects.get(map__channel=forum, topic_id=42)
    assert dragons.last_processed_message_id == 5
    assert f'<tr id="topic-{dragons.pk}">' in html
    dragons_row = html[html.index(f'<tr id="topic-{dragons.pk}">') :]
    assert "1 archive<" in dragons_row[: dragons_row.index("</tr>")], "its last scan found wyrm.zip"


def test_a_topic_fetch_switch_swaps_its_row(admin_client, setup):
    forum = channel(FORUM)
    reader = TelegramAccount.objects.get(phone=READER)
    channel_map = AccountChannelMap.objects.create(account=reader, channel=forum)
    topic = TopicProgress.objects.create(map=channel_map, topic_id=42, title="Dragons", last_processed_message_id=9)
    url = reverse("ingestion:channel-topic-fetch", args=[forum.pk, topic.pk])

    html = htmx_post(admin_client, url, {})

    assert html.lstrip().startswith(f'<tr id="topic-{topic.pk}">') and ">Off<" in html
    assert not TopicProgress.objects.get(pk=topic.pk).fetch_enabled
    htmx_post(admin_client, url, {"fetch_enabled": "on"})
    assert TopicProgress.objects.get(pk=topic.pk).fetch_enabled


def test_row_actions_without_htmx_redirect_with_a_message(admin_client, setup):
    source = channel(SOURCE)

    response = admin_client.post(
        reverse("ingestion:channel-settings", args=[source.pk]), {"expiration_days": "-3"}, follow=True
    )

    assert response.redirect_chain[-1][0] == reverse("ingestion:channels")
    assert "Models A: Use empty (keep raw files)" in response.content.decode()


# Runs -------------------------------------------------------------------------------------------------------


def test_runs_page_shows_counters_and_only_open_runs_poll(admin_client, setup):
    done = run_cycle()
    reader = TelegramAccount.objects.get(phone=READER)
    running = IngestionRun.objects.create(
        account=reader,
        status=RunStatus.RUNNING,
        current_channel="Models A",
        current_file="big.7z.001",
        current_step="downloading",
        current_bytes_done=256,
        current_bytes_total=1024,
    )

    html = admin_client.get(reverse("ingestion:runs")).content.decode()

    assert f'<tr id="run-{done.pk}">' in html, "a finished run does not poll"
    assert f'class="badge outcome--{done.outcome.key}"' in html and done.outcome.key == "success"
    assert f'hx-get="{reverse("ingestion:runs-row", args=[running.pk])}" hx-trigger="every 2s"' in html
    assert "big.7z.001" in html and "25%" in html and "256 B of 1 KB" in html


def test_the_polled_row_stops_polling_when_the_run_is_over(admin_client, setup):
    reader = TelegramAccount.objects.get(phone=READER)
    run = IngestionRun.objects.create(account=reader, status=RunStatus.RUNNING, current_file="dragon.zip")
    url = reverse("ingestion:runs-row", args=[run.pk])

    live = admin_client.get(url, **HTMX)
    assert live.status_code == 200 and 'hx-trigger="every 2s"' in live.content.decode()

    IngestionRun.objects.filter(pk=run.pk).update(status=RunStatus.PARTIAL, error="Telegram asked to wait 3600 s")
    over = admin_client.get(url, **HTMX)
    assert over.status_code == 286
    assert "every 2s" not in over.content.decode() and "3600 s" in over.content.decode()


def test_ingest_now_for_one_account_queues_one_run(admin_client, setup):
    reader = TelegramAccount.objects.get(phone=READER)
    url = reverse("ingestion:runs-ingest-now")

    first = admin_client.post(url, {"account": reader.pk}, follow=True).content.decode()
    run = IngestionRun.objects.get()
    assert (run.account, run.trigger, run.status) == (reader, "manual", RunStatus.QUEUED)
    assert f"Queued run #{run.pk} for Reader A." in first

    again = admin_client.post(url, {"account": reader.pk}, follow=True).content.decode()
    assert f"Reader A already has run #{run.pk} queued: it starts as soon as a worker is free." in again
    assert IngestionRun.objects.count() == 1


def test_ingest_now_for_all_queues_a_run_per_reading_account(admin_client, setup):
    html = admin_client.post(reverse("ingestion:runs-ingest-now"), {"account": ""}, follow=True).content.decode()

    assert list(IngestionRun.objects.values_list("account__phone", flat=True)) == [READER]
    assert "Queued 1 run: Reader A." in html

    again = admin_client.post(reverse("ingestion:runs-ingest-now"), {"account": ""}, follow=True).content.decode()
    assert "already has a run queued or running" in again


def test_ingest_now_for_all_says_when_nobody_reads_an_active_channel(admin_client, setup):
    Channel.objects.update(is_active=False)

    html = admin_client.post(reverse("ingestion:runs-ingest-now"), {"account": ""}, follow=True).content.decode()

    assert "No logged-in account reads an active channel" in html
    assert not IngestionRun.objects.exists()


def test_ingest_now_refuses_an_account_that_is_not_logged_in(admin_client, setup):
    reader = TelegramAccount.objects.get(phone=READER)
    TelegramAccount.objects.filter(pk=reader.pk).update(auth_state=AuthState.EXPIRED)

    html = admin_client.post(reverse("ingestion:runs-ingest-now"), {"account": reader.pk}, follow=True)

    assert "Choose a logged-in account" in html.content.decode()
    assert not IngestionRun.objects.exists()


def test_runs_can_be_filtered_by_status(admin_client, setup):
    done = run_cycle()
    reader = TelegramAccount.objects.get(phone=READER)
    failed = IngestionRun.objects.create(account=reader, status=RunStatus.FAILED, error="boom")

    html = admin_client.get(reverse("ingestion:runs"), {"status": "failed"}).content.decode()

    assert f'id="run-{failed.pk}"' in html and f'id="run-{done.pk}"' not in html


# Skipped ----------------------------------------------------------------------------------------------------


@pytest.fixture
def too_large(ingest_world, settings):
    """dragon.zip skipped as SIZE_LIMIT; raising the limit back lets a retry through."""
    settings.INGEST_MAX_PACKAGE_BYTES = 100
    ingest_world(world(messages=ARCHIVES))
    run_cycle()
    return SkippedPackage.objects.get()


def test_skipped_page_shows_reason_channel_error_and_attempts(admin_client, too_large, settings):
    settings.INGEST_MAX_SKIP_ATTEMPTS = 5

    html = admin_client.get(reverse("ingestion:skipped")).content.decode()

    assert 'class="badge reason--size_limit">Too large<' in html
    assert "dragon.zip" in html and "Models A" in html
    assert "the largest package the console takes" in html
    assert "1 of 5" in html and "not retried by itself" in html
    assert f'hx-post="{reverse("ingestion:skipped-retry", args=[too_large.pk])}"' in html
    assert 'Too large <span class="pill-count">1</span>' in html


def test_skipped_page_filters_by_reason_and_channel(admin_client, too_large):
    missing = admin_client.get(reverse("ingestion:skipped"), {"reason": "MISSING_PART"}).content.decode()
    assert f'id="skipped-{too_large.pk}"' not in missing and "Nothing skipped for this filter." in missing

    by_channel = admin_client.get(reverse("ingestion:skipped"), {"channel": too_large.channel_id}).content.decode()
    assert f'id="skipped-{too_large.pk}"' in by_channel and "Channel: Models A" in by_channel


def test_retry_replaces_the_row_and_rewinds_the_channel(admin_client, too_large, settings):
    url = reverse("ingestion:skipped-retry", args=[too_large.pk])

    html = htmx_post(admin_client, url)

    assert "Queued for retry" in html and "dragon.zip" in html
    assert not SkippedPackage.objects.exists()
    assert AccountChannelMap.objects.get(account__phone=READER, role=MapRole.READER).last_processed_message_id == 10
    settings.INGEST_MAX_PACKAGE_BYTES = 10**9
    assert run_cycle().ingested == 1

    assert "Already retried" in htmx_post(admin_client, url)


def test_retry_all_of_one_reason(admin_client, too_large):
    url = reverse("ingestion:skipped-retry-all")

    other = admin_client.post(url, {"reason": "MISSING_PART"}, follow=True).content.decode()
    assert "0 packages (missing part) queued for retry" in other
    assert SkippedPackage.objects.exists()

    response = admin_client.post(url, {"reason": "SIZE_LIMIT"}, **HTMX)
    assert response.status_code == 200 and response["HX-Redirect"] == reverse("ingestion:skipped")
    assert not SkippedPackage.objects.exists()
    assert "1 package (too large) queued for retry" in admin_client.get(reverse("ingestion:skipped")).content.decode()


def test_retry_all_with_an_unknown_reason_changes_nothing(admin_client, too_large):
    html = admin_client.post(reverse("ingestion:skipped-retry-all"), {"reason": "BOGUS"}, follow=True)

    assert "Unknown reason" in html.content.decode()
    assert SkippedPackage.objects.exists()


def test_the_channels_page_is_paginated(admin_client):
    from accounts.models import Chat
    from ingestion.models import Channel

    for number in range(60):
        chat = Chat.objects.create(telegram_id=70_000 + number, title=f"Chan {number:02d}", type="channel")
        Channel.objects.create(chat=chat)

    first = admin_client.get("/channels/").content.decode()
    second = admin_client.get("/channels/?page=2").content.decode()

    assert "Page 1 of 2" in first and "Chan 49" in first and "Chan 50" not in first
    assert "Chan 59" in second and "No destination yet" in second
