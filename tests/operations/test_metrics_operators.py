"""/metrics and /api/metrics/: the metrics token of their own, or an operator (session or API token); a
viewer's login or token is refused."""

import pytest

from core.tokens import api_token_create

pytestmark = pytest.mark.django_db

METRICS_TOKEN = "scraper-token-0123456789abcdef"


@pytest.fixture
def viewer(django_user_model):
    return django_user_model.objects.create_user(username="vera", password="pw-long-enough")


@pytest.mark.parametrize("path", ["/metrics", "/api/metrics/"])
def test_a_viewer_cannot_read_the_metrics(client, viewer, settings, path):
    settings.METRICS_TOKEN = METRICS_TOKEN
    _, secret = api_token_create(owner=viewer, name="scraper", scope="read")
    assert client.get(path, headers={"Authorization": f"Token {secret}"}).status_code in (401, 403)
    client.force_login(viewer)
    assert client.get(path).status_code == 403


@pytest.mark.parametrize("path", ["/metrics", "/api/metrics/"])
def test_an_operator_and_the_metrics_token_can(client, operator, settings, path):
    settings.METRICS_TOKEN = METRICS_TOKEN
    assert operator.get(path).status_code == 200
    operator.logout()
    assert client.get(path, headers={"Authorization": f"Bearer {METRICS_TOKEN}"}).status_code == 200
