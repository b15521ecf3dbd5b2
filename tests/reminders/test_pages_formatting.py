"""The compose form's formats: each part says how it is written, its preview shows it as Telegram will (live,
through HTMX), and a part Telegram would refuse says where the problem is."""

import pytest
from django.urls import reverse

from reminders.models import Reminder
from reminders.services import PartSpec
from tests.support.pages import compose, htmx_post
from tests.support.reminders import groups_world, make_reminder

pytestmark = pytest.mark.django_db


def preview(client, **changes) -> str:
    return htmx_post(client, reverse("reminders:part-preview"), compose(preview="0", **changes))


def test_the_preview_shows_the_part_as_telegram_will(operator, fanout_world):
    fanout_world(groups_world(groups=2))

    html = preview(
        operator, **{"part-0-text": "**Sale** <today> [shop](https://shop.example)", "part-0-format": "markdown"}
    )

    assert (
        '<p class="part-text part-text--live"><b>Sale</b> &lt;today&gt; '
        '<a href="https://shop.example" rel="noopener noreferrer" target="_blank">shop</a></p>'
    ) in html


def test_the_preview_of_plain_text_keeps_its_markup_as_text(operator, fanout_world):
    fanout_world(groups_world(groups=2))

    html = preview(operator, **{"part-0-text": "**Sale**"})

    assert '<p class="part-text part-text--live">**Sale**</p>' in html


def test_the_preview_says_where_telegram_would_refuse_it(operator, fanout_world):
    fanout_world(groups_world(groups=2))

    html = preview(operator, **{"part-0-text": "<b>Sale", "part-0-format": "html"})

    assert "HTML: &lt;b&gt; at line 1, column 1 (near “&lt;b&gt;Sale”) is never closed" in html
    assert "part-text--live" not in html


def test_the_preview_of_a_part_that_is_not_there_is_not_found(operator, fanout_world):
    fanout_world(groups_world(groups=2))

    response = operator.post(reverse("reminders:part-preview"), compose(preview="3"))

    assert response.status_code == 404


def test_the_format_is_saved_and_refused_markup_stops_the_message_step(operator, fanout_world):
    fanout_world(groups_world(groups=2))
    url = reverse("reminders:compose")

    refused = htmx_post(
        operator, url, compose(action="goto-groups", **{"part-0-text": "__Sale", "part-0-format": "markdown"})
    )
    assert "Markdown: “__” at line 1, column 1 (near “__Sale”) is opened but never closed" in refused

    htmx_post(
        operator, url, compose(action="save", step="review", **{"part-0-text": "__Sale__", "part-0-format": "markdown"})
    )
    part = Reminder.objects.get().parts.get()
    assert (part.text, part.format) == ("__Sale__", "markdown")


def test_the_edit_page_keeps_each_parts_format(operator, fanout_world):
    fanout_world(groups_world(groups=2))
    reminder = make_reminder(parts=[PartSpec(text="<b>Hi</b>", format="html")])

    page = operator.get(reverse("reminders:edit-message", args=[reminder.pk])).content.decode()

    assert '<option value="html" selected>HTML</option>' in page
    assert '<p class="part-text part-text--live"><b>Hi</b></p>' in page
