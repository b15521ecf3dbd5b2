"""The compose form's formats and albums: each part says how it is written, its preview shows it as Telegram will
(live, through HTMX), a part Telegram would refuse says where the problem is; an album is built from several
files."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from reminders.models import MediaFile, Reminder
from reminders.services import PartSpec
from tests.support.pages import compose, htmx_post
from tests.support.reminders import groups_world, image, make_reminder, png_bytes

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


def test_an_album_is_built_from_several_files_and_saved_as_one_part(operator, fanout_world):
    fanout_world(groups_world(groups=2))
    url = reverse("reminders:compose")
    html = htmx_post(operator, url, compose(action="add-album"))
    assert "Choose 2 to 10 pictures or files" in html and 'name="part-1-kind" value="album"' in html

    files = [SimpleUploadedFile(f"kit-{n}.png", png_bytes(n), content_type="image/png") for n in (1, 2, 3)]
    data = compose(part=["0", "1"], **{"part-1-kind": "album", "part-1-caption": "**Three** kits"})
    html = htmx_post(operator, url, data | {"action": "upload", "part-1-files": files})
    kits = list(MediaFile.objects.order_by("name"))
    assert [media.name for media in kits] == ["kit-1.png", "kit-2.png", "kit-3.png"]
    assert all(f'name="part-1-album" value="{media.pk}"' in html for media in kits)

    album = {"part-1-album": [str(media.pk) for media in kits], "part-1-format": "markdown"}
    html = htmx_post(operator, url, data | album | {"action": "unpick-1-2"})
    assert f'name="part-1-album" value="{kits[2].pk}"' not in html

    one = {"part-1-album": [str(kits[0].pk)]}
    refused = htmx_post(operator, url, data | one | {"action": "goto-groups"})
    assert "Choose 2 to 10 pictures or files for the album." in refused

    htmx_post(operator, url, data | album | {"action": "save", "step": "review"})
    part = Reminder.objects.get().parts.get(order=1)
    assert (part.album, part.caption, part.format) == ([media.pk for media in kits], "**Three** kits", "markdown")


def test_the_reminder_page_shows_each_part_as_it_arrives_and_its_album(operator, fanout_world):
    fanout_world(groups_world(groups=2))
    kits = [image(seed) for seed in (1, 2)]
    reminder = make_reminder(
        parts=[
            PartSpec(text="**Sale** <today>", format="markdown"),
            PartSpec(album=kits, caption="<i>Two</i> kits", format="html"),
        ]
    )

    page = operator.get(reverse("reminders:detail", args=[reminder.pk])).content.decode()

    assert '<p class="part-text part-text--live"><b>Sale</b> &lt;today&gt;</p>' in page
    assert '<p class="part-text part-text--live"><i>Two</i> kits</p>' in page
    assert page.index("promo-1.png") < page.index("promo-2.png") < page.index("<i>Two</i>")


def test_how_it_arrives_is_chosen_with_the_message_and_shown_on_the_reminder(operator, fanout_world):
    fanout_world(groups_world(groups=2))
    page = operator.get(reverse("reminders:compose")).content.decode()
    assert 'name="link_preview" id="id_link_preview" checked' in page
    assert 'name="silent" id="id_silent">' in page

    data = compose(action="save", step="review", silent="on", pin="on", replace_previous="on")
    data.pop("link_preview")
    htmx_post(operator, reverse("reminders:compose"), data)

    reminder = Reminder.objects.get()
    options = (reminder.silent, reminder.link_preview, reminder.pin, reminder.replace_previous)
    assert options == (True, False, True, True)
    detail = operator.get(reverse("reminders:detail", args=[reminder.pk])).content.decode()
    assert "Silent · no link preview · pinned in each group · replaces the previous run's post" in detail


def test_the_review_step_shows_each_part_as_it_arrives_and_names_the_album_files(operator, fanout_world):
    fanout_world(groups_world(groups=2))
    kits = [image(seed) for seed in (1, 2)]
    data = compose(
        part=["0", "1"],
        **{
            "part-0-text": "**Sale** <today>",
            "part-0-format": "markdown",
            "part-1-kind": "album",
            "part-1-album": [str(media.pk) for media in kits],
            "part-1-caption": "",
        },
    )

    html = htmx_post(operator, reverse("reminders:compose"), data | {"step": "when", "action": "goto-review"})

    review = html[html.index('id="step-review-title"') :]
    assert '<p class="part-text part-text--live"><b>Sale</b> &lt;today&gt;</p>' in review
    assert "**Sale**" not in review
    assert re.search(r'<span class="media-kind">album</span> 2 files: promo-1\.png, promo-2\.png', review)
