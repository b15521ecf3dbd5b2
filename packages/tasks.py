from celery import shared_task

from packages.services import raw_files_purge


@shared_task
def raw_files_purge_expired() -> int:
    return raw_files_purge()
