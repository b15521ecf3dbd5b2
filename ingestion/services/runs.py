"""Ingestion runs: asked for by the schedule or an operator, queued, and started spread out."""

import random
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from accounts.ingest_limits import account_ingest_wait
from accounts.models import AuthState, TelegramAccount
from core import task_names
from core.formatting import format_moment
from core.models import RunStatus
from core.runs import run_task_send
from ingestion.models import (
    Channel,
    IngestionRun,
    IngestionTrigger,
    MapRole,
)


def ingestion_run_request(
    *,
    account: TelegramAccount,
    trigger: str = IngestionTrigger.MANUAL,
    enqueue: bool = True,
    countdown: int | None = None,
    channel: Channel | None = None,
) -> tuple[IngestionRun, bool]:
    """Queue a run for an account unless one is already queued or running; (run, created).

    enqueue=False leaves the run for the caller to claim and work in-process; countdown delays its start;
    channel makes it a run of that one channel (Ingest now on the channel's page).
    """
    if account.auth_state != AuthState.AUTHENTICATED or not account.is_active:
        raise ValidationError(f"{account} is not an active, logged-in account.")
    if account.is_resting:
        raise ValidationError(
            f"{account} is resting until {format_moment(account.resting_until, dated=True)}; nothing is "
            "ingested through it until then."
        )
    if trigger == IngestionTrigger.MANUAL and (wait := account_ingest_wait(account=account)):
        raise ValidationError(wait)
    with transaction.atomic():
        TelegramAccount.objects.select_for_update().get(pk=account.pk)
        open_run = IngestionRun.objects.filter(
            account=account, status__in=[RunStatus.QUEUED, RunStatus.RUNNING]
        ).first()
        if open_run is not None:
            if trigger == IngestionTrigger.MANUAL and enqueue and open_run.starts_at is not None:
                _start_now(open_run)
            return open_run, False
        if enqueue and countdown is None:
            scheduled = trigger == IngestionTrigger.SCHEDULE
            countdown = random.randint(0, settings.INGEST_JITTER_SECONDS) if scheduled else 0
        starts_at = timezone.now() + timedelta(seconds=countdown) if enqueue and countdown else None
        run = IngestionRun.objects.create(account=account, trigger=trigger, channel=channel, starts_at=starts_at)
        if enqueue:
            transaction.on_commit(lambda: _enqueue(run.pk, countdown))
    return run, True


def _start_now(run: IngestionRun) -> None:
    """Ingest now on an account whose run waits for its delayed start: that run starts at once. Its delayed task
    still arrives later and finds the run claimed (a second delivery), so the run is worked once."""
    if IngestionRun.objects.filter(pk=run.pk, status=RunStatus.QUEUED).update(starts_at=None):
        run.starts_at = None
        transaction.on_commit(lambda: _enqueue(run.pk))


def _enqueue(run_id: int, countdown: int = 0) -> None:
    run_task_send(task_names.INGESTION_RUN_EXECUTE, run_id, countdown=countdown)


def ingestion_run_enqueue(run_id: int) -> None:
    _enqueue(run_id)


def ingestion_cycle_start(*, trigger: str = IngestionTrigger.SCHEDULE) -> list[IngestionRun]:
    """One run per active, logged-in account that reads at least one active channel, is not resting and is within
    its ingestion hours."""
    accounts = (
        TelegramAccount.objects.filter(
            is_active=True,
            auth_state=AuthState.AUTHENTICATED,
            channel_maps__role=MapRole.READER,
            channel_maps__channel__is_active=True,
        )
        .exclude(resting_until__gt=timezone.now())
        .distinct()
    )
    runs = []
    for account in accounts:
        if account_ingest_wait(account=account):
            continue
        run, created = ingestion_run_request(account=account, trigger=trigger)
        if created:
            runs.append(run)
    return runs


def channel_ingest_now(*, channel: Channel) -> tuple[IngestionRun, bool]:
    """Ingest one channel now, with the first logged-in account that reads it; (run, created).

    An account that already has a run queued or running keeps it (one run per account at a time): that run is
    returned, and it reads this channel too unless it was asked for another one channel.
    """
    if not channel.is_active:
        raise ValidationError(f"{channel.title} is switched off; switch it on to ingest it.")
    reader = (
        TelegramAccount.objects.filter(
            channel_maps__channel=channel,
            channel_maps__role=MapRole.READER,
            is_active=True,
            auth_state=AuthState.AUTHENTICATED,
        )
        .order_by("phone")
        .first()
    )
    if reader is None:
        raise ValidationError(f"No logged-in account reads {channel.title}; add a reader on the Channels page.")
    return ingestion_run_request(account=reader, trigger=IngestionTrigger.MANUAL, channel=channel)


def run_progress_write(*, run: IngestionRun, fields: dict) -> None:
    """A cycle's live progress (counters, the file and step at hand), written every so often while it works."""
    IngestionRun.objects.filter(pk=run.pk).update(**fields)
