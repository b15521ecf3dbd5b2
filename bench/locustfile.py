"""Locust's operators for `bench/load.py`: each logs in through the login page, then goes over the main pages
and searches the packages the way a person does, a few seconds apart.

OPERATOR_PASSWORD and OPERATOR_COUNT come from bench/load.py; users are `operator-0`…
"""

import itertools
import os
import re

from locust import HttpUser, between, task

PASSWORD = os.environ["BENCH_OPERATOR_PASSWORD"]
COUNT = int(os.environ["BENCH_OPERATOR_COUNT"])
_numbers = itertools.count()
_CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')

SEARCHES = ["dragon", "gob part_7", "sword-4242", "tower", "creator-12", "bust base"]


class Operator(HttpUser):
    # An operator reads a page before the next click: 1–3 s apart (docs: bench/README.md).
    wait_time = between(1, 3)

    def on_start(self):
        username = f"operator-{next(_numbers) % COUNT}"
        page = self.client.get("/login/", name="login page")
        token = _CSRF.search(page.text).group(1)
        answer = self.client.post(
            "/login/",
            data={"username": username, "password": PASSWORD, "csrfmiddlewaretoken": token},
            headers={"Referer": f"{self.host}/login/"},
            name="login",
            allow_redirects=False,
        )
        if answer.status_code != 302:
            raise RuntimeError(f"{username} could not log in (HTTP {answer.status_code})")
        self.searches = itertools.cycle(SEARCHES[len(username) % len(SEARCHES) :] + SEARCHES)

    def _page(self, url: str, name: str) -> None:
        with self.client.get(url, name=name, allow_redirects=False, catch_response=True) as answer:
            if answer.status_code != 200:
                answer.failure(f"HTTP {answer.status_code}")

    @task(4)
    def dashboard(self):
        self._page("/", "dashboard")

    @task(1)
    def operations(self):
        self._page("/operations/", "operations")

    @task(1)
    def accounts(self):
        self._page("/accounts/", "accounts")

    @task(2)
    def channels(self):
        self._page("/channels/", "channels")

    @task(2)
    def runs(self):
        self._page("/ingestion/runs/", "ingestion runs")

    @task(3)
    def packages(self):
        self._page("/packages/", "packages")

    @task(2)
    def grid(self):
        self._page("/packages/?view=grid", "packages grid")

    @task(2)
    def skipped(self):
        self._page("/skipped/", "skipped")

    @task(2)
    def reminders(self):
        self._page("/reminders/", "reminders")

    @task(1)
    def activity(self):
        self._page("/activity/", "activity")

    @task(1)
    def notifications(self):
        self._page("/notifications/", "notifications")

    @task(4)
    def search(self):
        self._page(f"/packages/?q={next(self.searches)}", "search")
