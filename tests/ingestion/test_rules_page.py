"""The channel page's "What it takes": the rules form answers with itself, errors kept in it."""

import re

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse

from ingestion.models import Channel, StartPoint
from ingestion.services import channel_rules_update
from tests.support.ingestion import ARCHIVES, SOURCE, run_cycle, world
from tests.support.pages import htmx_post

pytestmark = pytest.mark.django_db


@pytest.fixture
def source(ingest_world) -> Channel:
    ingest_world(world(messages=ARCHIVES))
    return Channel.objects.get(chat__telegram_id=SOURCE)


def form_data(**changes) -> dict:
    data = {
        "take_kinds": ["zip", "7z"],
        "take_multi_volume": "on",
        "leave_extensions": "pdf",
        "name_pattern": "",
        "min_bytes": "1 kB",
        "max_bytes": "500 MB",
        "start_from": "now",
        "start_date": "",
        "start_message_link": "",
        "action": "save",
    }
    return data | changes


def test_the_page_shows_the_rules_as_saved(admin_client, source):
    channel_rules_update(channel=source, take_kinds=["rar"], max_bytes="1.5 GB", name_pattern="dragon")

    html = admin_client.get(reverse("ingestion:channel-detail", args=[source.pk])).content.decode()

    assert "What it takes" in html
    assert re.search(r'value="rar"[^>]* checked', html) and not re.search(r'value="zip"[^>]* checked', html)
    assert 'value="1500 MB"' in html and 'value="dragon"' in html
    assert 'value="history"' in html and "Save rules" in html


def test_saving_answers_with_the_section_and_keeps_the_watermark(admin_client, source):
    html = htmx_post(admin_client, reverse("ingestion:channel-rules", args=[source.pk]), form_data())

    assert html.startswith('<section class="card rules" id="channel-rules"') and "Saved." in html
    source.refresh_from_db()
    assert (source.take_kinds, source.min_bytes, source.max_bytes) == (["7z", "zip"], 1000, 500_000_000)
    assert (source.leave_extensions, source.start_from) == (["pdf"], StartPoint.NOW)
    assert source.start_date is not None


@pytest.mark.parametrize(
    ("changes", "says"),
    [
        ({"name_pattern": "dragon(["}, "not a valid regular expression"),
        ({"max_bytes": "huge"}, "is not a size"),
        ({"start_from": "message", "start_message_link": "t.me/c/77/5"}, "another chat"),
    ],
)
def test_errors_stay_in_the_form_with_what_was_typed(admin_client, source, changes, says):
    html = htmx_post(admin_client, reverse("ingestion:channel-rules", args=[source.pk]), form_data(**changes))

    assert says in html and 'class="field has-error"' in html
    for typed in changes.values():
        assert f'value="{typed}"' in html
    assert Channel.objects.get(pk=source.pk).start_from == StartPoint.HISTORY  # nothing saved


def test_preview_lists_the_last_documents_without_saving(admin_client, source):
    html = htmx_post(
        admin_client,
        reverse("ingestion:channel-rules", args=[source.pk]),
        form_data(action="preview", take_kinds="zip"),
    )

    assert "The last 100 documents: 1 of 3 sets taken" in html
    assert html.count("Left out") == 2 and "dragon.zip" in html
    assert Channel.objects.get(pk=source.pk).take_kinds == []


def test_choosing_the_whole_history_shows_its_count_first(admin_client, source):
    channel_rules_update(channel=source, start_from=StartPoint.NOW)
    url = reverse("ingestion:channel-rules", args=[source.pk])

    html = htmx_post(admin_client, url, form_data(start_from="history", take_kinds=[]))

    assert "The whole history of Models A:</strong> 3 sets" in html and "Take the whole history" in html
    assert Channel.objects.get(pk=source.pk).start_from == StartPoint.NOW

    html = htmx_post(admin_client, url, form_data(start_from="history", take_kinds=[], confirm_history="1"))

    assert "Saved." in html
    assert Channel.objects.get(pk=source.pk).start_from == StartPoint.HISTORY


def test_a_viewer_reads_the_rules_in_words_without_the_form(source):
    channel_rules_update(
        channel=source,
        take_kinds=["zip", "7z"],
        max_bytes="500 MB",
        start_from="message",
        start_message_link="t.me/c/1001/20",
    )
    viewer = get_user_model().objects.create_user("viewer", password="x")
    client = Client()
    client.force_login(viewer)

    html = client.get(reverse("ingestion:channel-detail", args=[source.pk])).content.decode()

    assert "<dt>Kinds taken</dt><dd>ZIP, 7z</dd>" in html and "<dd>any to 500 MB</dd>" in html
    assert "<dd>From a message (t.me/c/1001/20)</dd>" in html
    assert "Save rules" not in html and 'class="rules-form"' not in html


def test_the_scan_history_says_what_the_rules_filtered(admin_client, source):
    channel_rules_update(channel=source, take_kinds=["zip"])
    run = run_cycle()

    html = admin_client.get(reverse("ingestion:channel-detail", args=[source.pk])).content.decode()
    run_page = admin_client.get(reverse("ingestion:run-detail", args=[run.pk])).content.decode()

    assert "+2 filtered" in html and "2 filtered by channel rules" in run_page
