from django.db import models
from django.utils import timezone


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"
    SUCCESS = "success", "Success"
    PARTIAL = "partial", "Partial"
    FAILED = "failed", "Failed"


class ClaimableRun(models.Model):
    """A unit of work that exactly one worker may hold at a time.

    Celery may deliver a task twice; the claim (a conditional UPDATE on this
    row) decides which delivery works and which returns.
    """

    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True)
    worker_id = models.CharField(max_length=200, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    requeue_count = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        abstract = True

    @property
    def is_over(self) -> bool:
        return self.status in {RunStatus.SUCCESS, RunStatus.PARTIAL, RunStatus.FAILED}
