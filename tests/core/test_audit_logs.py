"""The web server's own access log, from a real gunicorn started as the container starts it: each request's
route, never an invite link's secret, a signed download link, a query string or a referrer's secret."""

import socket
import subprocess
import sys
import time

import pytest
import requests
from django.conf import settings

from core import people
from core.models import Role
from tests.support.processes import stop, worker_env

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.processes]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answering(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            requests.get(url, timeout=10)
            return
        except requests.RequestException:
            time.sleep(0.3)
    raise AssertionError(f"gunicorn did not answer {url}")


def test_the_access_log_names_routes_not_secrets(django_user_model, tmp_path):
    olga = django_user_model.objects.create_user(username="olga", password="pw-long-enough")
    _invite, secret = people.invite_create(role=Role.OPERATOR, created_by=olga)
    port, log = _free_port(), tmp_path / "access.log"
    # From the repository's folder, as the container starts it: gunicorn reads gunicorn.conf.py there.
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}", "--workers", "1"]
        + ["--access-logfile", str(log)],
        cwd=settings.BASE_DIR,
        env=worker_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        _answering(f"{base}/healthz")
        opened = requests.get(f"{base}/invite/{secret}/", timeout=10)
        forged = requests.get(
            f"{base}/packages/download/signed-abc123/x.zip?sig=query-secret",
            headers={"Referer": f"{base}/invite/{secret}/"},
            timeout=10,
        )
    finally:
        stop(server)
    assert opened.status_code == 200 and forged.status_code == 403
    written = log.read_text()
    assert "GET /invite/:token/" in written and "GET /packages/download/:token/:name" in written
    for secret_part in (secret, "signed-abc123", "query-secret"):
        assert secret_part not in written
