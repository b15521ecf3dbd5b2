from datetime import datetime

from celery import shared_task
from django.conf import settings
from django.db import DatabaseError
from kombu.exceptions import OperationalError as KombuOperationalError
from redis.exceptions import RedisError

from core import clock
from reminders import fanout, services


@shared_task(bind=True, max_retries=None)
def reminder_run_execute(self, run_id: int) -> str | None:
    status = fanout.reminder_run_execute(run_id=run_id)
    if status == fanout.BUSY:
        # another run has the account; this one stays queued until it is done
        raise self.retry(countdown=settings.REMINDER_ACCOUNT_BUSY_RETRY_SECONDS)
    return status


# An outage of PostgreSQL, or of Redis while the run's own task is sent, must not lose the slot.
OUTAGES = (DatabaseError, RedisError, KombuOperationalError)


@shared_task(bind=True, max_retries=settings.REMINDER_FIRE_RETRIES)
def reminder_fire(self, reminder_id: int, fired_at: str | None = None) -> int | None:
    """What each reminder's PeriodicTask runs: the run of the slot due when it first ran, once."""
    moment = datetime.fromisoformat(fired_at) if fired_at else clock.now()
    try:
        run = services.reminder_fire_scheduled(reminder_id=reminder_id, fired_at=moment)
    except OUTAGES as exc:
        # the retry serves the same slot, however late it comes
        countdown = min(2**self.request.retries, settings.REMINDER_FIRE_RETRY_MAX_SECONDS)
        raise self.retry(exc=exc, countdown=countdown, args=[reminder_id, moment.isoformat()]) from exc
    return run.pk if run is not None else None


@shared_task
def reminder_slots_catch_up() -> list[int]:
    return services.reminder_slots_catch_up()


@shared_task
def reminder_runs_auto_resume() -> list[int]:
    return services.reminder_runs_auto_resume()


@shared_task
def media_purge_unused() -> int:
    return services.media_purge_unused()
