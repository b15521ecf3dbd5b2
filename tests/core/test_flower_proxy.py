"""Flower has one door: the console's /flower/ proxy, for operators, with the console's login."""

import base64
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.contrib.auth.models import Group
from django.test import Client

from core.roles import OPERATORS_GROUP

pytestmark = pytest.mark.django_db
SECRET = "flower:only-the-proxy-knows-this"


class FakeFlower(BaseHTTPRequestHandler):
    """Answers as Flower does behind its basic auth; remembers what it was asked."""

    seen: list[tuple[str, str, str]] = []

    def do_GET(self):
        authorization = self.headers.get("Authorization", "")
        FakeFlower.seen.append((self.command, self.path, authorization))
        if authorization != "Basic " + base64.b64encode(SECRET.encode()).decode():
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="flower"')
            self.end_headers()
            return
        body = b'{"celery@host": {"status": true}}' if "/api/" in self.path else b"<html>Flower workers</html>"
        self.send_response(200)
        self.send_header("Content-Type", "application/json" if "/api/" in self.path else "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def flower(settings):
    server = ThreadingHTTPServer(("127.0.0.1", 0), FakeFlower)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    settings.FLOWER_URL = f"http://127.0.0.1:{server.server_address[1]}/"
    settings.FLOWER_BASIC_AUTH = SECRET
    FakeFlower.seen = []
    yield FakeFlower.seen
    server.shutdown()
    server.server_close()


@pytest.fixture
def viewer(django_user_model):
    client = Client()
    client.force_login(django_user_model.objects.create_user("viewer", password="x"))
    return client


@pytest.fixture
def operator(django_user_model):
    user = django_user_model.objects.create_user("operator", password="x")
    user.groups.add(Group.objects.get_or_create(name=OPERATORS_GROUP)[0])
    client = Client()
    client.force_login(user)
    return client


def streamed(response) -> bytes:
    return b"".join(response.streaming_content)


def test_an_operator_sees_flower_under_the_consoles_login(flower, operator):
    page = operator.get("/flower/workers?refresh=1")
    api = operator.get("/flower/api/workers")

    assert page.status_code == 200 and streamed(page) == b"<html>Flower workers</html>"
    assert api.status_code == 200 and api["Content-Type"] == "application/json"
    assert [(method, path) for method, path, _ in flower] == [
        ("GET", "/flower/workers?refresh=1"),
        ("GET", "/flower/api/workers"),
    ]
    assert all(auth == "Basic " + base64.b64encode(SECRET.encode()).decode() for _, _, auth in flower)


def test_strangers_go_to_the_login_and_viewers_are_refused(flower, viewer):
    stranger = Client().get("/flower/api/workers")
    refused = viewer.get("/flower/api/workers")
    refused_page = viewer.get("/flower/")

    assert stranger.status_code == 302 and stranger["Location"].startswith("/login/")
    assert refused.status_code == 403 and "for operators" in refused.json()["message"]
    assert refused_page.status_code == 403 and "Flower is for operators" in refused_page.content.decode()
    assert flower == [], "nothing reached Flower"


def test_the_browsers_own_basic_auth_is_never_passed_on(flower, operator):
    operator.get("/flower/", headers={"Authorization": "Basic " + base64.b64encode(b"admin:guess").decode()})

    assert flower[0][2] == "Basic " + base64.b64encode(SECRET.encode()).decode()


def test_flower_is_read_only_through_the_console(flower, django_user_model):
    user = django_user_model.objects.create_user("op", password="x", is_superuser=True)
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)

    without_token = client.post("/flower/api/task/async-apply/reminders.tasks.reminder_fire", {"args": "[1]"})
    client.get("/")  # a console page hands out the CSRF cookie
    token = client.cookies["csrftoken"].value
    with_token = client.post(
        "/flower/api/task/async-apply/reminders.tasks.reminder_fire", {"args": "[1]"}, headers={"X-CSRFToken": token}
    )

    assert without_token.status_code == 403
    assert with_token.status_code == 405 and "read-only" in with_token.json()["message"]
    assert flower == [], "no POST reached Flower"


def test_a_stopped_flower_is_a_502_that_says_so(operator, settings):
    settings.FLOWER_URL = "http://127.0.0.1:1/"

    response = operator.get("/flower/")

    assert response.status_code == 502 and "Flower is not answering" in response.content.decode()


def test_login_failures_through_flower_are_the_consoles_and_are_throttled(flower, settings, django_user_model):
    django_user_model.objects.create_user("operator", password="right-password", is_superuser=True)
    client = Client()
    for _ in range(settings.AXES_FAILURE_LIMIT):
        client.post("/login/?next=/flower/", {"username": "operator", "password": "wrong"})

    locked = client.post("/login/?next=/flower/", {"username": "operator", "password": "right-password"})

    assert locked.status_code == 429 and client.get("/flower/").status_code == 302
    assert flower == []


def test_the_task_tables_read_post_needs_flowers_own_xsrf_token(flower, operator):
    without = operator.post("/flower/tasks/datatable", {"draw": "1"})
    operator.cookies["_xsrf"] = "flower-token"
    wrong = operator.post("/flower/tasks/datatable", {"draw": "1"}, headers={"X-XSRFToken": "other"})
    right = operator.post("/flower/tasks/datatable", {"draw": "1"}, headers={"X-XSRFToken": "flower-token"})

    assert (without.status_code, wrong.status_code) == (403, 403)
    assert right.status_code == 501, "passed on to Flower (this fake one answers GET only)"


def test_flowers_inline_script_is_allowed_by_its_hash_alone(flower, operator):
    policy = operator.get("/flower/")["Content-Security-Policy"]

    assert "'sha256-A0YIP5A+DKoseGAUTHRoMPDkKPK5cKzfYH3mjcCKtj8='" in policy and "unsafe-inline" not in policy
