from celery import shared_task
from django.conf import settings

from reminders import fanout, services
from reminders.models import Reminder, RunTrigger


@shared_task(bind=True, max_retries=None)
def reminder_run_execute(self, run_id: int) -> str | None:
    status = fanout.reminder_run_execute(run_id=run_id)
    if status == fanout.BUSY:
        # another run has the account; this one stays queued until it is done
        raise self.retry(countdown=settings.REMINDER_ACCOUNT_BUSY_RETRY_SECONDS)
    return status


@shared_task
def reminder_fire(reminder_id: int) -> int | None:
    """What each reminder's PeriodicTask runs."""
    reminder = Reminder.objects.filter(pk=reminder_id, enabled=True).first()
    if reminder is None:
        return None
    return services.reminder_fire(reminder=reminder, trigger=RunTrigger.SCHEDULE).pk


@shared_task
def reminder_runs_auto_resume() -> list[int]:
    return services.reminder_runs_auto_resume()


@shared_task
def media_purge_unused() -> int:
    return services.media_purge_unused()
