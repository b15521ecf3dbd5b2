from datetime import timedelta

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings

from core import health
from core.audit import audit_purge as purge_audit
from core.idempotency import idempotent_requests_purge as purge_idempotent_requests
from core.notifications import notifications_purge as purge_read_notifications
from core.runs import run_kinds, runs_reap_stale, runs_resend_forgotten


@shared_task
def runs_reap_all() -> dict[str, dict[str, list[int]]]:
    reaped = runs_reap_stale()
    report = {}
    for kind in run_kinds():
        label = kind.model._meta.label
        resent = runs_resend_forgotten(
            model=kind.model,
            older_than=timedelta(seconds=settings.WORK_RESEND_QUEUED_AFTER_SECONDS),
            enqueue=kind.enqueue,
        )
        report[label] = {"requeued": reaped[label].requeued, "failed": reaped[label].failed, "resent": resent}
    return report


@worker_ready.connect
def _reap_at_start(sender, **kwargs):
    # A worker started again after a crash (make run's supervisord restarts it) takes back the runs of this host's
    # dead worker now, not a reaper's tick later.
    runs_reap_all.delay()


@shared_task(ignore_result=True)
def beat_heartbeat() -> None:
    """Sent by beat every BEAT_HEARTBEAT_SECONDS; /healthz reads the tick (core.health)."""
    health.beat_tick()


@shared_task
def notifications_purge() -> int:
    return purge_read_notifications(older_than=timedelta(days=settings.NOTIFICATION_RETENTION_DAYS))


@shared_task
def idempotent_requests_purge() -> int:
    return purge_idempotent_requests(older_than=timedelta(hours=settings.IDEMPOTENCY_KEEP_HOURS))


@shared_task
def audit_purge() -> int:
    return purge_audit(older_than=timedelta(days=settings.AUDIT_KEEP_DAYS))
