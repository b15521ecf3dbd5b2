import time

from celery import shared_task

from tests.claimtest.models import ProbeRun


@shared_task
def probe_nap(seconds: float, note: str) -> None:
    """Works for `seconds`, then leaves a row saying so: a task long enough to be running when the broker goes."""
    time.sleep(seconds)
    ProbeRun.objects.create(worker_id=note)
