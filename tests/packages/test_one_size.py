"""One package, one size: the Packages page, its own page, the channel's rules preview and the API's words all
write 651,600 bytes as "651.6 KB" (decimal units, as the size fields read them)."""

import re

import pytest
from django.urls import reverse

from ingestion.models import Channel
from packages.models import Package
from tests.support.ingestion import SOURCE, run_cycle, world

pytestmark = pytest.mark.django_db

MESSAGES = [{"id": 30, "document": {"name": "knight.stl", "size": 651_600, "seed": "one-size"}}]
# How the same bytes used to read elsewhere: binary units, a lowercase k, three figures.
OTHER_WAYS = re.compile(r"636\.3 KB|651\.6 kB|652 KB|651\.6 KiB")


@pytest.fixture
def bust(ingest_world) -> Package:
    ingest_world(world(messages=MESSAGES))
    run = run_cycle()
    assert run.error == "", run.error
    return Package.objects.get(file_name="knight.stl")


def test_the_same_package_shows_the_same_size_everywhere(bust, admin_client, api):
    assert bust.file_size == 651_600
    channel = Channel.objects.get(chat__telegram_id=SOURCE)
    preview = admin_client.post(
        reverse("ingestion:channel-rules", args=[channel.pk]),
        {"action": "preview", "start_from": "now"},
        HTTP_HX_REQUEST="true",
    ).content.decode()
    pages = {
        "Packages": admin_client.get(reverse("packages:list")).content.decode(),
        "package page": admin_client.get(reverse("packages:detail", args=[bust.pk])).content.decode(),
        "rules preview": re.search(r"<tr[^>]*>(?:(?!</tr>).)*knight\.stl.*?</tr>", preview, re.S).group(0),
    }
    for name, html in pages.items():
        assert "651.6 KB" in html, f"{name} does not say 651.6 KB"
        assert not OTHER_WAYS.search(html), f"{name} says {OTHER_WAYS.search(html).group(0)}"

    listed = api.get("/api/packages/").json()["results"][0]
    assert (listed["file_size"], listed["file_size_text"]) == (651_600, "651.6 KB")
    assert api.get(f"/api/packages/{bust.pk}/").json()["file_size_text"] == "651.6 KB"
    tried = api.post(f"/api/channels/{channel.pk}/rules-preview/", {}, format="json").json()
    assert [(row["size"], row["size_text"]) for row in tried["sets"]] == [(651_600, "651.6 KB")]
