"""A body too large to read: the API answers a JSON 413, a page keeps its form and says why."""

import json

import pytest
from django.test import Client
from django.urls import reverse

from core.tokens import api_token_create

pytestmark = pytest.mark.django_db

THREE_MB = "x" * (3 * 1024 * 1024)


@pytest.fixture
def token(admin_user):
    return api_token_create(owner=admin_user, name="script", scope="write")[1]


@pytest.mark.parametrize("content_type", ["application/json", "application/x-www-form-urlencoded"])
def test_the_api_answers_413_in_json_with_the_limit(client, token, content_type):
    data = json.dumps({"name": THREE_MB}) if content_type == "application/json" else f"name={THREE_MB}"

    response = client.post(
        "/api/reminders/", data, content_type=content_type, headers={"Authorization": f"Token {token}"}
    )

    assert response.status_code == 413
    assert response["Content-Type"] == "application/json"
    assert "at most 2.6 MB of text" in response.json()["message"]


def test_a_multipart_api_upload_is_not_counted_as_text(client, token, settings, tmp_path):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from tests.support.reminders import png_bytes

    settings.MEDIA_ROOT = tmp_path / "media"
    upload = SimpleUploadedFile("promo.png", png_bytes(1) + b"\0" * (3 * 1024 * 1024), "image/png")

    response = client.post("/api/media/", {"file": upload}, headers={"Authorization": f"Token {token}"})

    assert response.status_code != 413


def test_an_htmx_form_gets_the_message_for_the_top_of_the_form(admin_client):
    response = admin_client.post(
        reverse("reminders:compose"), {"step": "message", "part-0-text": THREE_MB}, headers={"HX-Request": "true"}
    )

    assert response.status_code == 413 and response["X-Request-Refused"] == "true"
    html = response.content.decode()
    assert html.startswith('<div class="alert alert--error request-error" role="alert">')
    assert "4,096 characters" in html and "<html" not in html


def test_a_plain_form_gets_a_page_that_sends_back_to_it(admin_client):
    compose = reverse("reminders:compose")

    response = admin_client.post(compose, {"part-0-text": THREE_MB}, headers={"Referer": f"http://testserver{compose}"})

    assert response.status_code == 413
    html = response.content.decode()
    assert "Not sent" in html and "at most 2.6 MB of text" in html and f'href="http://testserver{compose}"' in html


def test_a_stranger_is_refused_the_same_way_without_a_traceback():
    response = Client().post("/login/", {"username": THREE_MB}, headers={"Referer": "https://elsewhere.example/"})

    assert response.status_code == 413 and "Traceback" not in response.content.decode()
    assert "elsewhere.example" not in response.content.decode()


def test_too_many_fields_is_a_400_with_the_limit(client, token, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
    data = "&".join(f"f{n}=1" for n in range(20))

    response = client.post(
        "/api/reminders/",
        data,
        content_type="application/x-www-form-urlencoded",
        headers={"Authorization": f"Token {token}"},
    )

    assert response.status_code == 400 and "too many fields (at most 10)" in response.json()["message"]


def test_an_unknown_api_address_is_a_json_404(client, token):
    response = client.get("/api/no-such-thing/", headers={"Authorization": f"Token {token}"})

    assert response.status_code == 404 and "/api/docs/" in response.json()["message"]
    assert Client().get("/no-such-page/").status_code == 404


def test_a_multipart_body_without_its_boundary_is_a_json_400(client, token):
    response = client.post(
        "/api/reminders/", "{}", content_type="multipart/form-data", headers={"Authorization": f"Token {token}"}
    )

    assert response.status_code == 400 and "boundary" in response.json()["message"]
