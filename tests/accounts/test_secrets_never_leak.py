"""The API hash, Telegram sessions and 2FA passwords never reach a response, a log line, a task or an error report.

A login with a two-step verification password runs through the API (JSON and the browsable API) and
through the pages; everything said back is searched: response bodies and headers, every log record at
DEBUG (SQL included), stdout/stderr, the arguments of every Celery task sent (what Flower shows), and
the error reports Django would mail (DEBUG off) for a crash in the middle of the password step.
"""

import json
import logging
import traceback

import pytest
from celery import Celery
from celery.app.task import Task
from django.core.signals import got_request_exception
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.views.debug import ExceptionReporter
from telethon.tl import functions

from accounts.models import AuthState, TelegramAccount
from core.crypto import unseal
from telegram.sandbox.methods import HANDLERS
from tests.support.accounts import GUARDED

pytestmark = pytest.mark.django_db

API_HASH = "f00dbabe-api-hash-7e3c1a9d2b"
PASSWORD = "correct horse"  # GUARDED's password in tests/accounts/world.py
WRONG_PASSWORD = "incorrect-stapler-4711"


class Witness:
    """Collects everything the system says while a test runs, then looks for secrets in it."""

    def __init__(self):
        self.texts: list[tuple[str, str]] = []
        self.tasks: list[tuple[str, str]] = []

    def response(self, label: str, response) -> None:
        body = response.content.decode(errors="replace") if not getattr(response, "streaming", False) else ""
        headers = "\n".join(f"{name}: {value}" for name, value in response.items())
        self.texts.append((f"response {label} ({response.status_code})", f"{headers}\n{body}"))

    def logs(self, records: list[logging.LogRecord]) -> None:
        formatter = logging.Formatter()
        for record in records:
            text = record.getMessage()
            if record.exc_info:
                text += "\n" + formatter.formatException(record.exc_info)
            self.texts.append((f"log {record.name} {record.levelname}", text))

    def find(self, secret: str) -> list[str]:
        return [label for label, text in self.texts + self.tasks if secret in text]


@pytest.fixture
def witness(monkeypatch, caplog, capsys, settings):
    settings.TELEGRAM_API_HASH = API_HASH
    seen = Witness()

    def record_task(task, args=None, kwargs=None, **options):
        seen.tasks.append((f"task {task.name}", json.dumps({"args": args, "kwargs": kwargs}, default=str)))

    def record_sent(app, name, args=None, kwargs=None, **options):
        seen.tasks.append((f"task {name}", json.dumps({"args": args, "kwargs": kwargs}, default=str)))

    # Tasks sent by name go through send_task when their module is not imported yet; both are watched.
    monkeypatch.setattr(Task, "apply_async", record_task)
    monkeypatch.setattr(Celery, "send_task", record_sent)
    for name in ["", *logging.root.manager.loggerDict]:
        caplog.set_level(logging.DEBUG, logger=name or None)
    connection.force_debug_cursor = True  # every SQL statement is logged too
    yield seen
    connection.force_debug_cursor = False
    seen.logs(caplog.records)
    out, err = capsys.readouterr()
    seen.texts.append(("stdout/stderr", out + err))


def assert_nothing_leaked(seen: Witness, *sessions: str) -> None:
    secrets = {"2FA password": PASSWORD, "wrong 2FA password": WRONG_PASSWORD, "API hash": API_HASH}
    for number, session in enumerate(sessions):
        secrets[f"session {number}"] = session
        secrets[f"session {number} key part"] = session.rsplit(":", 1)[-1]
    leaks = {name: seen.find(secret) for name, secret in secrets.items()}
    assert not {name: where for name, where in leaks.items() if where}, leaks
    assert seen.texts, "nothing was captured"


def session_of(phone: str) -> str:
    session = unseal(TelegramAccount.objects.get(phone=phone).session_sealed)
    assert session
    return session


def test_a_login_through_the_api_leaks_nothing(world, admin_user, witness, django_capture_on_commit_callbacks):
    api = Client()
    api.force_login(admin_user)

    def call(label, method, url, data=None, **extra):
        response = getattr(api, method)(url, data, content_type="application/json", **extra) if data else None
        response = response or getattr(api, method)(url, **extra)
        witness.response(label, response)
        return response

    account = call("create", "post", "/api/accounts/", {"phone": GUARDED}).json()
    url = f"/api/accounts/{account['id']}/"
    call("send code", "post", f"{url}send-code/")
    assert call("code", "post", f"{url}sign-in/", {"code": "33333"}).json()["auth_state"] == AuthState.AWAITING_PASSWORD
    assert call("wrong password", "post", f"{url}sign-in/", {"password": WRONG_PASSWORD}).status_code == 400
    # The browsable API, as a person would use it: a form post answered in HTML.
    browsable = api.post(f"{url}sign-in/", {"password": WRONG_PASSWORD}, HTTP_ACCEPT="text/html")
    witness.response("browsable wrong password", browsable)
    assert browsable.status_code == 400 and b"<html" in browsable.content
    signed_in = call("password", "post", f"{url}sign-in/", {"password": PASSWORD})
    assert signed_in.json()["auth_state"] == AuthState.AUTHENTICATED
    session = session_of(GUARDED)

    for label, path in [("list", "/api/accounts/"), ("detail", url), ("schema", "/api/schema/")]:
        call(label, "get", path)
        call(f"{label} html", "get", path, HTTP_ACCEPT="text/html")
    call("refresh chats", "post", f"{url}refresh-chats/")
    with django_capture_on_commit_callbacks(execute=True):
        call("ingest now", "post", "/api/ingestion/trigger/", {"account": account["id"]})

    assert witness.tasks, "no Celery task was sent: the task check saw nothing"
    assert_nothing_leaked(witness, session)


def test_a_login_through_the_pages_leaks_nothing(world, admin_client, witness):
    def call(label, method, url, data=None, **extra):
        response = getattr(admin_client, method)(url, data or {}, **extra)
        witness.response(label, response)
        return response

    htmx = {"HTTP_HX_REQUEST": "true"}
    call("add", "post", reverse("accounts:add"), {"phone": GUARDED}, **htmx)
    account = TelegramAccount.objects.get(phone=GUARDED)
    call("code", "post", reverse("accounts:code", args=[account.pk]), {"code": "33333"}, **htmx)
    password_url = reverse("accounts:password", args=[account.pk])
    wrong = call("wrong password", "post", password_url, {"password": WRONG_PASSWORD})
    assert wrong.status_code == 200 and b"password" in wrong.content  # the dialog again, with the error
    call("password", "post", password_url, {"password": PASSWORD}, **htmx)
    account.refresh_from_db()
    assert account.auth_state == AuthState.AUTHENTICATED
    session = session_of(GUARDED)

    for label, path in [
        ("accounts", reverse("accounts:list")),
        ("dashboard", reverse("dashboard")),
        ("admin list", reverse("admin:accounts_telegramaccount_changelist")),
        ("admin change", reverse("admin:accounts_telegramaccount_change", args=[account.pk])),
    ]:
        assert call(label, "get", path).status_code == 200
    call("refresh chats", "post", reverse("accounts:refresh-chats", args=[account.pk]), **htmx)

    assert_nothing_leaked(witness, session)


@pytest.mark.parametrize("through", ["page", "api"])
def test_a_crash_in_the_password_step_leaks_nothing_in_the_error_report(
    world, admin_user, witness, monkeypatch, through
):
    """With DEBUG off, the report Django mails to ADMINS (and any error tracker sees) hides the password."""
    client = Client(raise_request_exception=False)
    client.force_login(admin_user)
    account = TelegramAccount.objects.create(phone=GUARDED)
    client.post(reverse("accounts:send-code", args=[account.pk]))
    client.post(reverse("accounts:code", args=[account.pk]), {"code": "33333"})
    session = session_of(GUARDED)

    def crash(call):
        raise RuntimeError("the sandbox fell over")

    monkeypatch.setitem(HANDLERS, functions.auth.CheckPasswordRequest, crash)
    reports = []

    def report(sender, request, **kwargs):
        import sys

        exc_info = sys.exc_info()
        reporter = ExceptionReporter(request, *exc_info)
        reports.append(reporter.get_traceback_text())
        reports.append(reporter.get_traceback_html())
        reports.append("".join(traceback.format_exception(*exc_info)))

    got_request_exception.connect(report)
    try:
        if through == "page":
            response = client.post(reverse("accounts:password", args=[account.pk]), {"password": PASSWORD})
        else:
            response = client.post(
                f"/api/accounts/{account.pk}/sign-in/", {"password": PASSWORD}, content_type="application/json"
            )
    finally:
        got_request_exception.disconnect(report)

    assert response.status_code == 500
    witness.response("crash", response)
    assert reports and "the sandbox fell over" in reports[0]
    assert "sign_in_password" in reports[0], "the report does not reach the frame holding the password"
    for number, text in enumerate(reports):
        witness.texts.append((f"error report {number}", text))
    assert_nothing_leaked(witness, session)
