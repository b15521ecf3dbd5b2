"""An operator frees a console login that throttling (django-axes) locked out, from the Accounts page."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse

from core.roles import OPERATORS_GROUP

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery"
ROOT = Path(__file__).resolve().parents[2]


def log_in(client: Client, password: str, username: str = "alice"):
    return client.post(reverse("login"), {"username": username, "password": password}, REMOTE_ADDR="203.0.113.7")


def test_a_locked_out_login_is_unlocked_by_an_operator_and_logs_in(admin_client, django_user_model, settings):
    django_user_model.objects.create_user(username="alice", password=PASSWORD)
    alice = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        log_in(alice, "wrong")
    assert log_in(alice, PASSWORD).status_code == 429  # locked out, even with the right password

    page = admin_client.get(reverse("accounts:list")).content.decode()
    assert "Console logins" in page and "Locked until" in page and 'aria-label="Unlock alice"' in page

    answer = admin_client.post(reverse("accounts:login-unlock"), {"username": "alice"}, HTTP_HX_REQUEST="true")

    text = answer.content.decode()
    assert "alice can log in again." in text and "Locked until" not in text
    response = log_in(alice, PASSWORD)
    assert response.status_code == 302 and "_auth_user_id" in alice.session


def test_unlocking_a_login_that_is_not_locked_says_so(admin_client):
    response = admin_client.post(reverse("accounts:login-unlock"), {"username": "nobody"}, follow=True)
    assert "nobody was not locked out." in response.content.decode()


def test_viewers_see_the_lockout_but_cannot_unlock(client, django_user_model, settings):
    django_user_model.objects.create_user(username="alice", password=PASSWORD)
    for _ in range(settings.AXES_FAILURE_LIMIT):
        log_in(Client(), "wrong")
    viewer = django_user_model.objects.create_user(username="viewer", password=PASSWORD)
    client.force_login(viewer)

    page = client.get(reverse("accounts:list")).content.decode()

    assert "Locked until" in page and "Unlock alice" not in page
    assert client.post(reverse("accounts:login-unlock"), {"username": "alice"}).status_code == 403


def test_the_operators_list_names_roles(admin_client, django_user_model):
    operator = django_user_model.objects.create_user(username="bob", password=PASSWORD)
    operator.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    django_user_model.objects.create_user(username="carol", password=PASSWORD)

    page = admin_client.get(reverse("accounts:list")).content.decode()

    section = page[page.index("Console logins") :]
    assert section.index("bob") < section.index("carol")  # operators first
    assert "Operator" in section and "Viewer" in section


def _axes_lines(extra_env: dict) -> int:
    env = {**os.environ, **extra_env}
    result = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    return (result.stdout + result.stderr).count("AXES: BEGIN")


@pytest.mark.processes  # starts OS processes
def test_axes_says_begin_only_in_the_process_that_serves_logins():
    assert _axes_lines({"AXES_VERBOSE": "false"}) == 0  # worker, beat, Flower, every manage.py command
    assert _axes_lines({"AXES_VERBOSE": "true"}) == 1  # the web process (Procfile)
    web = next(line for line in (ROOT / "Procfile").read_text().splitlines() if line.startswith("web:"))
    assert "AXES_VERBOSE=true" in web
    others = [
        line for line in (ROOT / "Procfile").read_text().splitlines() if line and not line.startswith(("#", "web:"))
    ]
    assert all("AXES_VERBOSE" not in line for line in others)
