from celery import shared_task
from django.conf import settings

from packages import sending
from packages.services import raw_files_purge


@shared_task
def raw_files_purge_expired() -> int:
    return raw_files_purge()


@shared_task(bind=True, max_retries=None)
def package_send_execute(self, send_id: int) -> str | None:
    status = sending.package_send_execute(send_id=send_id)
    if status == sending.BUSY:
        # the account is sending or talking elsewhere; this send stays queued until it is free
        raise self.retry(countdown=settings.REMINDER_ACCOUNT_BUSY_RETRY_SECONDS)
    return status
