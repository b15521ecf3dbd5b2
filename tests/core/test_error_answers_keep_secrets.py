"""Error answers (403, 404, 410, 500; pages and JSON) and the log lines they leave never repeat a secret that was
in the address: an invite link's, a download link's signature, a token in the query."""

import logging

import pytest
from django.test import Client

from core.people import invite_create, invite_revoke
from core.roles import VIEWER_MESSAGE

pytestmark = pytest.mark.django_db

SECRET = "sEcReT-4f9c2b7d1e"


@pytest.fixture
def heard(caplog):
    caplog.set_level(logging.DEBUG)
    return caplog


@pytest.fixture
def errors_as_in_production(settings):
    settings.ROOT_URLCONF = "tests.browser.error_urls"  # the console's URLs and /fails/, a page that fails
    settings.DEBUG = False


def _kept(response, heard, *, in_the_log: bool = True) -> None:
    said = response.content.decode() + "".join(f"{name}: {value}" for name, value in response.headers.items())
    assert SECRET not in said, said
    if in_the_log:  # an address made up in full is logged as it came, its secret-like query parameters hidden
        assert SECRET not in heard.text, heard.text
        assert all(SECRET not in str(record.args) for record in heard.records)


@pytest.mark.parametrize(
    ("path", "status", "secret_route"),
    [
        (f"/invite/{SECRET}/", 410, True),  # no such link
        (f"/packages/download/{SECRET}/a.zip", 403, True),  # a signature the console did not make
        (f"/no-such-page/{SECRET}/?token={SECRET}", 404, False),
        (f"/api/no-such/{SECRET}/?token={SECRET}", 404, False),
        (f"/api/packages/{SECRET}/", 404, False),
        (f"/fails/?token={SECRET}", 500, True),
    ],
)
def test_an_error_repeats_no_secret_of_its_address(
    errors_as_in_production, operator, heard, path, status, secret_route
):
    operator.raise_request_exception = False  # /fails/: the 500 page a person gets
    response = operator.get(path) if not path.startswith("/invite/") else Client().get(path)

    assert response.status_code == status
    _kept(response, heard, in_the_log=secret_route)


def test_a_used_or_withdrawn_invite_link_repeats_no_secret(errors_as_in_production, django_user_model, heard):
    boss = django_user_model.objects.create_superuser("boss", password="x")
    invite, token = invite_create(role="viewer", created_by=boss)
    invite_revoke(invite=invite)
    heard.clear()

    response = Client().get(f"/invite/{token}/")

    assert response.status_code == 410, response.content.decode()
    assert token not in response.content.decode() and token not in heard.text


def test_a_viewer_refused_on_an_invite_link_sees_no_secret(errors_as_in_production, django_user_model, heard):
    viewer = Client()
    viewer.force_login(django_user_model.objects.create_user("viewer", password="x"))

    response = viewer.post(f"/invite/{SECRET}/?token={SECRET}")

    assert response.status_code == 403 and VIEWER_MESSAGE in response.content.decode()
    _kept(response, heard)


def test_a_log_line_naming_a_secret_address_hides_the_secret(heard):
    for logger in ("django.request", "django.server", "django.security.csrf"):
        logging.getLogger(logger).warning("Gone: %s", f"/invite/{SECRET}/")
        logging.getLogger(logger).info('"GET %s HTTP/1.1" 200', f"/packages/download/{SECRET}/a.zip?sig={SECRET}")
    logging.getLogger("django.request").error("token %s", f"sct_{SECRET}")

    assert SECRET not in heard.text and "sct_[hidden]" in heard.text
