"""A person is told where they stand: logged out, or sent to log in before the API docs."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_logging_out_says_so_on_the_login_page(admin_client):
    response = admin_client.post(reverse("logout"), follow=True)

    assert response.redirect_chain[-1][0] == reverse("login")
    assert "You are logged out." in response.content.decode()


def test_a_stranger_on_the_api_docs_is_sent_to_log_in(client):
    response = client.get("/api/docs/")

    assert response.status_code == 302
    assert response.url.startswith(reverse("login")) and "next=/api/docs/" in response.url


def test_a_logged_in_viewer_sees_the_api_docs(admin_client):
    assert admin_client.get("/api/docs/").status_code == 200
