"""History is kept: an account that did anything is switched off, not deleted; runs outlive their reminder;
no beat schedule outlives its reminder."""

import pytest
from django.urls import reverse
from django_celery_beat.models import PeriodicTask, PeriodicTasks

from accounts.models import TelegramAccount
from accounts.services import AccountHasHistory, account_delete
from core.models import RunStatus
from ingestion.models import IngestionRun
from reminders.models import Reminder, ReminderRun, TargetStatus
from reminders.services import ReminderStateError, reminder_delete, reminder_fire, reminder_run_resume
from tests.support.pages import HTMX
from tests.support.reminders import KL, KL_AFTER_CLOSE, KL_MORNING, account, execute, groups_world, make_reminder

pytestmark = pytest.mark.django_db


@pytest.fixture
def paused_run(fanout_world, at) -> ReminderRun:
    fanout_world(groups_world(groups=6))
    reminder = make_reminder(timezone=KL, start=9, end=18, schedule_crontab="0 9 * * *", name="Black Friday")
    at(KL_MORNING)
    run = reminder_fire(reminder=reminder)
    at(KL_MORNING, then=KL_AFTER_CLOSE, after=3)
    run = execute(run)
    assert run.status == RunStatus.PAUSED and run.pending > 0
    return run


def test_an_account_with_history_cannot_be_deleted_only_switched_off(paused_run, api, operator):
    sender = account()
    IngestionRun.objects.create(account=sender)

    with pytest.raises(AccountHasHistory, match=r"1 ingestion runs, 1 reminder runs, 1 reminders"):
        account_delete(account=sender)
    response = api.delete(f"/api/accounts/{sender.pk}/")
    assert response.status_code == 409 and "Switch it off instead" in response.json()["message"]
    row = operator.post(reverse("accounts:delete", args=[sender.pk]), **HTMX).content.decode()
    assert f'id="account-{sender.pk}"' in row and "cannot be deleted. Switch it off instead" in row

    off = api.post(f"/api/accounts/{sender.pk}/deactivate/")
    assert off.status_code == 200 and off.json()["is_active"] is False
    row = operator.post(reverse("accounts:active", args=[sender.pk]), {"is_active": "on"}, **HTMX).content.decode()
    assert "Switched on." in row and TelegramAccount.objects.get(pk=sender.pk).is_active
    assert ReminderRun.objects.filter(account=sender).count() == 1 and Reminder.objects.count() == 1


def test_an_account_without_history_is_deleted(api, fanout_world):
    fanout_world(groups_world(groups=1))

    assert api.delete(f"/api/accounts/{account().pk}/").status_code == 204
    assert not TelegramAccount.objects.exists()


def test_a_reminders_runs_outlive_it_and_its_schedule_does_not(paused_run, api):
    reminder = paused_run.reminder
    task_id = reminder.periodic_task_id
    sent = paused_run.sent

    assert api.delete(f"/api/reminders/{reminder.pk}/").status_code == 204

    run = ReminderRun.objects.get(pk=paused_run.pk)
    assert (run.reminder_id, run.reminder_name, run.sent) == (None, "Black Friday", sent)
    assert run.status == RunStatus.PARTIAL and run.pending == 0
    assert set(run.targets.values_list("status", flat=True)) == {TargetStatus.SENT, TargetStatus.SKIPPED}
    assert run.targets.filter(error="the reminder was deleted").exists()
    assert not PeriodicTask.objects.filter(pk=task_id).exists()
    body = api.get(f"/api/reminder-runs/{run.pk}/").json()
    assert (body["reminder"], body["reminder_name"], body["can_resume"]) == (None, "Black Friday", False)
    with pytest.raises(ReminderStateError):
        reminder_run_resume(run=run)


def test_the_activity_pages_show_a_run_whose_reminder_is_gone(paused_run, operator):
    reminder_delete(reminder=paused_run.reminder)

    activity = operator.get(reverse("reminders:activity")).content.decode()
    page = operator.get(reverse("reminders:activity-run", args=[paused_run.pk]))

    assert 'Black Friday <span class="muted">(deleted)</span>' in activity
    assert page.status_code == 200 and "Black Friday (deleted; its runs are kept)" in page.content.decode()


def test_no_schedule_outlives_its_reminder_however_it_is_deleted(paused_run):
    reminder = paused_run.reminder
    task_id = reminder.periodic_task_id
    before = PeriodicTasks.last_change()

    Reminder.objects.filter(pk=reminder.pk).delete()  # as the admin or a cascade would, past the services

    assert not PeriodicTask.objects.filter(pk=task_id).exists()
    assert PeriodicTasks.last_change() > before, "beat is told to reload its schedule"
    assert ReminderRun.objects.filter(pk=paused_run.pk, reminder=None).exists()
