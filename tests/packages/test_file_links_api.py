"""POST /api/packages/{id}/files/{file_id}/link/: one file out of a kept archive by a signed, expiring link, as the
page's Get makes it: operators (a write token), viewers only when DOWNLOAD_LINKS_FOR_VIEWERS is on."""

from datetime import datetime, timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from drf_spectacular.generators import SchemaGenerator

from core import clock
from core.models import AuditEntry
from core.tokens import READ_ONLY_MESSAGE, api_token_create
from packages.models import PackageFile
from tests.support.archives import tool
from tests.support.kits import MODEL, listed_package, packed

pytestmark = pytest.mark.django_db


@pytest.fixture
def kit(storage, tmp_path):
    package = listed_package(tmp_path, "kit.zip", packed(tmp_path, "kit.zip", tool("zip"), "-q", "-r"), "zip")
    return package, PackageFile.objects.get(package=package, path="kit/ball.stl")


def as_token(owner, scope: str) -> Client:
    _, secret = api_token_create(owner=owner, name="script", scope=scope)
    return Client(HTTP_AUTHORIZATION=f"Token {secret}")


def link_path(package, file) -> str:
    return f"/api/packages/{package.pk}/files/{file.pk}/link/"


def test_a_write_token_gets_a_link_that_serves_the_file_and_its_ranges(kit):
    package, file = kit
    operator = get_user_model().objects.create_superuser(username="boss", password="x")

    answer = as_token(operator, "write").post(link_path(package, file))

    assert answer.status_code == 200, answer.content
    data = answer.json()
    assert data["url"].startswith("http://testserver/packages/file/") and data["url"].endswith("/ball.stl")
    assert (data["path"], data["size"]) == ("kit/ball.stl", len(MODEL))
    expires_at = datetime.fromisoformat(data["expires_at"])
    assert expires_at.utcoffset() is not None, "the expiry carries its zone"
    assert timedelta(0) < expires_at - clock.now() <= timedelta(seconds=3600 * 24 * 30)
    whole = Client().get(data["url"])
    assert (whole.status_code, b"".join(whole.streaming_content)) == (200, MODEL)
    assert whole["Accept-Ranges"] == "bytes"
    piece = Client().get(data["url"], HTTP_RANGE="bytes=100-1099")
    assert piece.status_code == 206
    assert piece["Content-Range"] == f"bytes 100-1099/{len(MODEL)}"
    assert b"".join(piece.streaming_content) == MODEL[100:1100]
    tail = Client().get(data["url"], HTTP_RANGE="bytes=-10")
    assert b"".join(tail.streaming_content) == MODEL[-10:]
    assert Client().get(data["url"], HTTP_RANGE=f"bytes={len(MODEL)}-").status_code == 416

    made = AuditEntry.objects.get(path=link_path(package, file))
    assert made.via == "api" and f"file link made for kit/ball.stl of package {package.pk}" in made.summary
    assert "boss" in made.actor
    read_out = AuditEntry.objects.filter(action__startswith="file kit/ball.stl read out").count()
    assert read_out == 1, "the whole file began a read; the ranges past byte 0 continue one"
    token = data["url"].split("/")[-2]
    assert token not in str(list(AuditEntry.objects.values_list("path", "action", "summary")))


def test_a_read_token_makes_no_link_whoever_owns_it(kit, settings):
    package, file = kit
    settings.DOWNLOAD_LINKS_FOR_VIEWERS = True
    operator = get_user_model().objects.create_superuser(username="boss", password="x")

    refused = as_token(operator, "read").post(link_path(package, file))

    assert refused.status_code == 403 and refused.json()["message"] == READ_ONLY_MESSAGE
    assert not AuditEntry.objects.filter(summary__contains="file link made").exists()


def test_a_viewer_is_refused_unless_an_operator_allows_it(kit, settings):
    package, file = kit
    viewer = Client()
    viewer.force_login(get_user_model().objects.create_user(username="viewer", password="x"))

    refused = viewer.post(link_path(package, file))
    assert refused.status_code == 403 and "DOWNLOAD_LINKS_FOR_VIEWERS" in refused.json()["message"]
    missing = viewer.post(f"/api/packages/{package.pk}/files/{file.pk + 1000}/link/")
    assert missing.status_code == 403, "refused before saying whether the file exists"

    settings.DOWNLOAD_LINKS_FOR_VIEWERS = True
    answer = viewer.post(link_path(package, file))
    assert answer.status_code == 200
    assert b"".join(Client().get(answer.json()["url"]).streaming_content) == MODEL
    assert viewer.post(f"/api/packages/{package.pk}/files/{file.pk + 1000}/link/").status_code == 404


def test_an_expired_link_is_refused(kit, at):
    package, file = kit
    operator = get_user_model().objects.create_superuser(username="boss", password="x")
    start = clock.now()
    at(start)
    data = as_token(operator, "write").post(link_path(package, file)).json()

    at(datetime.fromisoformat(data["expires_at"]) + timedelta(seconds=1))
    late = Client().get(data["url"])

    assert late.status_code == 410 and "expired" in late.json()["message"]


def test_the_schema_documents_it():
    paths = SchemaGenerator().get_schema(request=None, public=True)["paths"]

    post = paths["/api/packages/{id}/files/{file_id}/link/"]["post"]
    assert {"200", "403", "404", "410"} <= set(post["responses"])
    assert "DOWNLOAD_LINKS_FOR_VIEWERS" in post["description"]
