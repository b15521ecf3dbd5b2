import logging
from datetime import timedelta

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from core.engine import BUSY
from ingestion import audit as audit_module
from ingestion import pipeline, recovery, scanning, services
from ingestion.models import IngestionTrigger

logger = logging.getLogger(__name__)


@shared_task
def ingestion_cycle_start() -> int:
    return len(services.ingestion_cycle_start(trigger=IngestionTrigger.SCHEDULE))


@shared_task(bind=True, max_retries=None)
def ingestion_run_execute(self, run_id: int) -> str | None:
    status = pipeline.ingestion_run_execute(run_id=run_id)
    if status == BUSY:
        # another run has the account (or this run's old worker has not stopped yet): it waits, queued, for it
        logger.info(
            "Ingestion run %s: its account is busy with another run; tried again in %s s.",
            run_id,
            settings.INGEST_ACCOUNT_BUSY_RETRY_SECONDS,
        )
        raise self.retry(countdown=settings.INGEST_ACCOUNT_BUSY_RETRY_SECONDS)
    if status is None:
        logger.info("Ingestion run %s is not queued (another delivery has it); nothing to do.", run_id)
    return status


@shared_task
def channel_scans_purge() -> int:
    return scanning.channel_scans_purge(older_than=timedelta(days=settings.INGEST_SCAN_HISTORY_DAYS))


@shared_task
def ingestion_recover() -> dict:
    return recovery.ingestion_recover()


@worker_ready.connect
def _recover_at_start(sender, **kwargs):
    # A worker that starts sweeps its host's staging (then hourly), recovers what a crash left, then looks for
    # new archives right away.
    recovery.staging_sweep_keep(every_seconds=settings.INGEST_STAGING_SWEEP_SECONDS)
    ingestion_recover.delay()
    ingestion_cycle_start.delay()


@shared_task
def catalog_rebuild() -> str:
    return services.catalog_rebuild_from_destination().summary()


@shared_task
def catalog_audit() -> int | None:
    audit = audit_module.catalog_audit_run()
    return audit.pk if audit else None
