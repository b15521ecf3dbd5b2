"""A new notification pops up as a browser notification; clicking it opens its page."""

import pytest

from core.notifications import notification_raise
from tests.support.browser import log_in_as

pytestmark = pytest.mark.browser

RECORDER = """
window.__shown = [];
window.Notification = class {
  static permission = "granted";
  static requestPermission() { return Promise.resolve("granted"); }
  constructor(title, options) {
    this.listeners = {};
    window.__shown.push({title, options, n: this});
  }
  addEventListener(name, handler) { this.listeners[name] = handler; }
};
"""


def test_a_paused_reminder_pops_up_and_opens_its_page(live_server, transactional_db, django_user_model, page):
    django_user_model.objects.create_superuser(username="operator", password="s3cret-pass")
    page.context.add_init_script(RECORDER)
    log_in_as(page, live_server.url, "operator", "s3cret-pass")
    page.wait_for_url(f"{live_server.url}/")
    notification_raise(
        type="reminder_run_paused",
        severity="warning",
        title="Reminder paused — 412 of 1000 groups delivered. Tap to resume or cancel.",
        message="Delivery window closed at 18:00 (Asia/Kuala_Lumpur).",
        subject="reminder-run:1",
        url="/activity/",
    )

    page.reload()  # what the bell's 30 s poll brings, at once

    shown = page.evaluate("window.__shown.map(s => [s.title, s.options.body])")
    assert shown == [
        [
            "Reminder paused — 412 of 1000 groups delivered. Tap to resume or cancel.",
            "Delivery window closed at 18:00 (Asia/Kuala_Lumpur).",
        ]
    ]
    page.evaluate("window.__shown[0].n.listeners.click()")
    page.wait_for_url(f"{live_server.url}/activity/")

    page.reload()
    assert page.evaluate("window.__shown.length") == 0, "announced once only"
