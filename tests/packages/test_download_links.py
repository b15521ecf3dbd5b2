"""Download links to a package's raw files: signed, expiring, naming who made them and audited; served from the local
disk with Range support (never read whole into memory), or by the object store itself through a presigned link."""

import hashlib
import os
import re
from datetime import timedelta
from urllib.parse import urlsplit

import pytest
import requests
from django.contrib.auth import get_user_model
from django.core.files.storage import default_storage
from django.test import Client
from django.utils import timezone

from core import clock
from core.models import AuditEntry
from core.roles import VIEWER_MESSAGE
from core.tokens import READ_ONLY_MESSAGE, api_token_create
from packages.models import RawFile
from packages.services import raw_files_purge
from packages.services.downloads import download_links_make
from tests.support.factories import package_with_raw_files

pytestmark = pytest.mark.django_db

DATA = os.urandom(256 * 1024 + 17)


@pytest.fixture
def package(storage, tmp_path):
    return package_with_raw_files(tmp_path, {"dragon.zip": DATA})


@pytest.fixture
def viewer(django_user_model):
    user = django_user_model.objects.create_user(username="viewer", password="s3cret-pass")
    client = Client()
    client.force_login(user)
    return client


def links_on_page(client, package) -> list[str]:
    response = client.get(f"/packages/{package.pk}/download-links/", HTTP_HX_REQUEST="true")
    assert response.status_code == 200, response.content.decode()
    return re.findall(r'href="(/packages/download/[^"]+)"', response.content.decode())


def body(response) -> bytes:
    return b"".join(response.streaming_content)


def test_the_whole_file_is_the_stored_bytes(operator, package):
    [link] = links_on_page(operator, package)

    response = Client().get(link)  # no login: the signature stands for the person

    assert response.status_code == 200
    assert response.streaming
    assert hashlib.sha256(body(response)).hexdigest() == hashlib.sha256(DATA).hexdigest()
    assert response["Content-Length"] == str(len(DATA))
    assert response["Accept-Ranges"] == "bytes"
    assert response["Content-Disposition"].startswith('attachment; filename="dragon.zip"')


@pytest.mark.parametrize(
    ("asked", "start", "end"),
    [
        ("bytes=0-99", 0, 99),  # the first bytes
        ("bytes=100000-100999", 100000, 100999),  # the middle
        ("bytes=-500", len(DATA) - 500, len(DATA) - 1),  # the last 500
        ("bytes=200000-", 200000, len(DATA) - 1),  # from there to the end
        ("bytes=262000-999999999", 262000, len(DATA) - 1),  # clipped to the end
    ],
)
def test_a_range_is_answered_with_206_and_exactly_those_bytes(operator, package, asked, start, end):
    [link] = links_on_page(operator, package)

    response = Client().get(link, HTTP_RANGE=asked)

    assert response.status_code == 206
    assert response["Content-Range"] == f"bytes {start}-{end}/{len(DATA)}"
    assert response["Content-Length"] == str(end - start + 1)
    assert body(response) == DATA[start : end + 1]


@pytest.mark.parametrize("asked", [f"bytes={len(DATA)}-", f"bytes={len(DATA) + 10}-{len(DATA) + 20}", "bytes=-0"])
def test_a_range_past_the_end_is_416(operator, package, asked):
    [link] = links_on_page(operator, package)

    response = Client().get(link, HTTP_RANGE=asked)

    assert response.status_code == 416
    assert response["Content-Range"] == f"bytes */{len(DATA)}"


@pytest.mark.parametrize("asked", ["bytes=0-9,20-29", "lines=1-2", "bytes=9-0"])
def test_a_range_it_does_not_understand_is_ignored_for_the_whole_file(operator, package, asked):
    [link] = links_on_page(operator, package)

    response = Client().get(link, HTTP_RANGE=asked)

    assert response.status_code == 200
    assert body(response) == DATA


def test_each_volume_has_its_own_link_in_volume_order(operator, storage, tmp_path):
    volumes = {"wyvern.7z.001": b"first" * 100, "wyvern.7z.002": b"second" * 100, "wyvern.7z.003": b"third"}
    package = package_with_raw_files(tmp_path, volumes, name="wyvern.7z")

    links = links_on_page(operator, package)

    assert [link.rsplit("/", 1)[1] for link in links] == list(volumes)
    assert [body(Client().get(link)) for link in links] == list(volumes.values())


def test_an_expired_link_is_410_with_a_message_as_json_or_a_page(operator, package, at):
    [link] = links_on_page(operator, package)
    at(clock.now() + timedelta(hours=1, seconds=1))

    as_json = Client().get(link)
    as_page = Client().get(link, HTTP_ACCEPT="text/html,application/xhtml+xml")

    assert as_json.status_code == 410
    assert "expired at" in as_json.json()["message"] and "make a new one" in as_json.json()["message"]
    assert as_page.status_code == 410
    assert "Download link no longer works" in as_page.content.decode()


def test_a_link_lasts_download_link_seconds(operator, package, settings, at):
    settings.DOWNLOAD_LINK_SECONDS = 120
    now = clock.now()
    [link] = links_on_page(operator, package)

    at(now + timedelta(seconds=110))
    assert Client().get(link).status_code == 200
    at(now + timedelta(seconds=121))
    assert Client().get(link).status_code == 410


@pytest.mark.parametrize("change", ["one character", "its separator", "cut short"])
def test_a_tampered_link_is_403(operator, package, change):
    [link] = links_on_page(operator, package)
    token = link.split("/")[3]
    if change == "one character":
        middle = len(token) // 2
        changed = token[:middle] + ("A" if token[middle] != "A" else "B") + token[middle + 1 :]
    elif change == "its separator":
        changed = token.replace(":", "x", 1)
    else:
        changed = token[:-5]

    response = Client().get(link.replace(token, changed))

    assert response.status_code == 403
    assert "not one the console made" in response.json()["message"]


def test_viewers_get_no_links_unless_an_operator_allows_it(viewer, package, settings):
    page = viewer.get(f"/packages/{package.pk}/").content.decode()
    assert "Make download links" not in page
    assert "Download links are for operators" in page
    refused = viewer.get(f"/packages/{package.pk}/download-links/", HTTP_HX_REQUEST="true")
    assert refused.status_code == 403
    assert "DOWNLOAD_LINKS_FOR_VIEWERS" in refused.content.decode()

    settings.DOWNLOAD_LINKS_FOR_VIEWERS = True
    assert "Make download links" in viewer.get(f"/packages/{package.pk}/").content.decode()
    [link] = links_on_page(viewer, package)
    assert body(Client().get(link)) == DATA

    settings.DOWNLOAD_LINKS_FOR_VIEWERS = False  # taken back: the links viewers made stop working
    response = Client().get(link)
    assert response.status_code == 403
    assert "may no longer download" in response.json()["message"]


def test_a_deactivated_persons_links_stop_working(operator, package):
    [link] = links_on_page(operator, package)
    get_user_model().objects.filter(username="operator").update(is_active=False)

    assert Client().get(link).status_code == 403


def test_the_page_without_javascript_shows_the_links_on_the_package_page(operator, package):
    response = operator.get(f"/packages/{package.pk}/download-links/")

    page = response.content.decode()
    assert response.status_code == 200
    assert "<h1" in page and "Working until" in page
    assert re.search(r'href="/packages/download/[^"]+/dragon.zip"', page)


def test_a_package_whose_raw_file_is_gone_says_so(operator, package, at):
    [link] = links_on_page(operator, package)
    RawFile.objects.update(expires_at=timezone.now() - timedelta(days=1))
    raw_files_purge()

    page = operator.get(f"/packages/{package.pk}/download-links/", HTTP_HX_REQUEST="true").content.decode()
    old_link = Client().get(link)
    api = operator.post(f"/api/packages/{package.pk}/download-link/")

    assert "no longer kept" in page and "/packages/download/" not in page
    assert old_link.status_code == 410 and "no longer kept" in old_link.json()["message"]
    assert api.status_code == 409 and "still in its destination channel" in api.json()["message"]


def test_a_raw_file_missing_from_the_disk_is_410_not_500(operator, package):
    [link] = links_on_page(operator, package)
    default_storage.delete(RawFile.objects.get().object.name)

    response = Client().get(link)

    assert response.status_code == 410
    assert "no longer kept" in response.json()["message"]


def test_making_and_using_links_is_audited_naming_the_maker(operator, package):
    [link] = links_on_page(operator, package)
    made = AuditEntry.objects.get()
    assert made.actor == "operator" and made.user.username == "operator"
    assert f"download links made for package {package.pk} (dragon.zip)" in made.action

    body(Client().get(link, HTTP_RANGE="bytes=0-1023", REMOTE_ADDR="198.51.100.7"))
    body(Client().get(link, HTTP_RANGE="bytes=1024-"))  # the same download, continued: no second entry

    used = AuditEntry.objects.exclude(pk=made.pk).get()
    assert used.actor == "operator"
    assert used.action == "download of dragon.zip by a link of operator"
    assert used.address == "198.51.100.7"


def test_the_api_makes_links_for_scripts(operator, package):
    response = operator.post(f"/api/packages/{package.pk}/download-link/")

    answer = response.json()
    assert response.status_code == 200
    assert answer["url"].startswith("http://testserver/packages/download/")
    assert [file["name"] for file in answer["files"]] == ["dragon.zip"]
    assert answer["files"][0]["sha256"] == hashlib.sha256(DATA).hexdigest()
    assert answer["files"][0]["size"] == len(DATA)
    assert answer["expires_at"]
    assert body(Client().get(answer["url"])) == DATA


def test_a_read_token_makes_no_download_link_whoever_owns_it(package, settings):
    """A link is a new way in that works without a login: making one is a change, for a write token."""
    operator = get_user_model().objects.create_superuser(username="boss", password="x")
    viewer = get_user_model().objects.create_user(username="viewer", password="x")
    settings.DOWNLOAD_LINKS_FOR_VIEWERS = True  # viewers make links on the package's page, not with a token

    for owner, message in ((operator, READ_ONLY_MESSAGE), (viewer, VIEWER_MESSAGE)):
        _, secret = api_token_create(owner=owner, name="script", scope="read")
        refused = Client(HTTP_AUTHORIZATION=f"Token {secret}").post(f"/api/packages/{package.pk}/download-link/")
        assert refused.status_code == 403 and refused.json()["message"] == message, owner.username
    assert not AuditEntry.objects.filter(action__contains="download links made").exists()


def test_a_link_to_a_raw_file_in_the_object_store_redirects_to_a_presigned_link_that_honours_ranges(
    object_store, tmp_path, django_user_model
):
    operator = django_user_model.objects.create_superuser(username="boss", password="x")
    package = package_with_raw_files(tmp_path, {"dragon.zip": DATA})
    [file] = download_links_make(package=package, user=operator).files

    response = Client().get(file.url)

    assert response.status_code == 302
    presigned = response["Location"]
    assert "X-Amz-Signature=" in presigned and "X-Amz-Expires=" in presigned
    whole = requests.get(presigned, timeout=30)
    assert whole.status_code == 200
    assert hashlib.sha256(whole.content).hexdigest() == hashlib.sha256(DATA).hexdigest()
    assert "dragon.zip" in whole.headers["Content-Disposition"]
    ranged = requests.get(presigned, headers={"Range": "bytes=100-199"}, timeout=30)
    assert ranged.status_code == 206
    assert ranged.content == DATA[100:200]
    assert ranged.headers["Content-Range"] == f"bytes 100-199/{len(DATA)}"


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_a_large_file_is_streamed_never_read_whole_into_memory(operator, package, settings):
    size = 300 * 1024 * 1024
    raw = RawFile.objects.get()
    big = settings.MEDIA_ROOT / "raw" / "big.bin"
    with open(big, "wb") as sparse:
        sparse.truncate(size)
    RawFile.objects.filter(pk=raw.pk).update(object="raw/big.bin", size=size, file_name="big.bin")
    [link] = links_on_page(operator, package)

    before = _rss()
    response = Client().get(link)
    assert response.streaming
    highest, total = before, 0
    for chunk in response.streaming_content:
        total += len(chunk)
        highest = max(highest, _rss())

    assert total == size
    assert highest - before < 64 * 1024 * 1024, f"RSS grew by {(highest - before) // 2**20} MiB"


def test_the_presigned_link_names_the_store_as_people_reach_it(object_store, tmp_path, django_user_model, settings):
    operator = django_user_model.objects.create_superuser(username="boss", password="x")
    package = package_with_raw_files(tmp_path, {"dragon.zip": DATA})
    [file] = download_links_make(package=package, user=operator).files
    inside = urlsplit(os.environ["TEST_S3_ENDPOINT"])
    settings.STORAGE_DOWNLOAD_ENDPOINT = f"http://localhost:{inside.port}"

    presigned = Client().get(file.url)["Location"]

    assert presigned.startswith(f"http://localhost:{inside.port}/")
    ranged = requests.get(presigned, headers={"Range": "bytes=-10"}, timeout=30)
    assert ranged.status_code == 206 and ranged.content == DATA[-10:]


def test_head_tells_the_size_and_that_ranges_are_served_and_is_not_a_download(operator, package):
    [link] = links_on_page(operator, package)
    made = AuditEntry.objects.count()

    response = Client().head(link)

    assert response.status_code == 200
    assert response["Content-Length"] == str(len(DATA))
    assert response["Accept-Ranges"] == "bytes"
    assert AuditEntry.objects.count() == made


def test_a_name_from_telegram_with_slashes_and_other_scripts_is_a_safe_link_and_a_named_download(
    operator, storage, tmp_path
):
    package = package_with_raw_files(tmp_path, {"Дракон #1?.zip": DATA})
    RawFile.objects.update(file_name='../Дракон "#1"?.zip')

    [link] = links_on_page(operator, package)
    response = Client().get(link)

    assert link.endswith("/%D0%94%D1%80%D0%B0%D0%BA%D0%BE%D0%BD%20%22%231%22%3F.zip")
    assert body(response) == DATA
    assert response["Content-Disposition"] == (
        "attachment; filename=\"?????? '#1'?.zip\"; "
        "filename*=UTF-8''%D0%94%D1%80%D0%B0%D0%BA%D0%BE%D0%BD%20%22%231%22%3F.zip"
    )
