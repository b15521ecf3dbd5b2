"""A queued run whose account is busy says for what it waits, and starts as soon as the account is free."""

import html

import psycopg
import pytest
from django.urls import reverse

from core import locks
from core.leases import connection_params
from core.models import RunStatus
from reminders import fanout
from reminders.models import ReminderRun
from reminders.services import reminder_fire, reminder_run_cancel
from tests.support.reminders import account, groups_world, make_reminder

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_run_behind_a_stopping_one_says_so_then_starts_when_it_lets_go(fanout_world, operator):
    fanout_world(groups_world(groups=2))
    first = reminder_fire(reminder=make_reminder(name="First"), enqueue=False)
    ReminderRun.objects.filter(pk=first.pk).update(status=RunStatus.RUNNING, worker_id="elsewhere-1-1")
    second = reminder_fire(reminder=make_reminder(name="Second"), enqueue=False)

    key = locks.lock_key(locks.FANOUT_ACCOUNT, str(account().pk))
    with psycopg.connect(**connection_params(), autocommit=True) as worker:  # the first run's worker holds it
        worker.execute("SELECT pg_advisory_lock(%s)", [key])
        assert fanout.reminder_run_execute(run_id=second.pk) == fanout.BUSY
        second.refresh_from_db()
        assert (
            second.error_summary == f"Waiting: run #{first.pk} of {account()} is sending; this one starts when it ends."
        )

        reminder_run_cancel(run=first)  # its worker has not let go yet
        assert fanout.reminder_run_execute(run_id=second.pk) == fanout.BUSY
        second.refresh_from_db()
        assert second.error_summary == (
            f"Waiting: the account's previous run (#{first.pk}) is still stopping; this one starts next."
        )
        panel = operator.get(reverse("reminders:activity-run-panel", args=[second.pk])).content.decode()
        panel = " ".join(html.unescape(panel).split())
        assert f"Run #{second.pk} is waiting — 2 groups to send" in panel and second.error_summary in panel
        # Its worker lets go (a closed connection's lock is released when its server process has ended: later)
        worker.execute("SELECT pg_advisory_unlock(%s)", [key])

    assert fanout.reminder_run_execute(run_id=second.pk) == RunStatus.SUCCESS
    second.refresh_from_db()
    assert second.error_summary == "", "what it waited for is over"
