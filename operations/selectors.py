"""Reads for the dashboard: real counts only, straight from the database, and what needs a person first."""

from dataclasses import dataclass, field

from django.db.models import Count
from django.urls import reverse

from accounts.models import AuthState, Chat, TelegramAccount
from core.runs import run_kinds, runs_stuck
from ingestion import selectors as ingestion_selectors
from ingestion.models import PENDING_REASONS, Channel, SkippedPackage, SkipReason
from operations.metrics import StateCount, accounts_by_state
from reminders.models import RESUMABLE, ReminderRun
from telegram.records import USER


@dataclass(frozen=True)
class DashboardSummary:
    accounts_total: int
    accounts_by_state: list[StateCount]
    accounts_premium: int
    chats_known: int

    @property
    def accounts_authenticated(self) -> int:
        return next(item.count for item in self.accounts_by_state if item.state == AuthState.AUTHENTICATED)


def dashboard_summary() -> DashboardSummary:
    by_state = accounts_by_state()
    return DashboardSummary(
        accounts_total=sum(item.count for item in by_state),
        accounts_by_state=by_state,
        accounts_premium=TelegramAccount.objects.filter(is_premium=True).count(),
        # A chat no account sees any more (dropped by a refresh) is not known.
        chats_known=Chat.objects.filter(account_links__isnull=False).exclude(type=USER).distinct().count(),
    )


@dataclass(frozen=True)
class SkippedGroup:
    reason: str
    label: str
    count: int
    example: str  # one file name, so the operator sees what kind of set it is


@dataclass(frozen=True)
class StuckRun:
    label: str
    pk: int
    quiet_since: object  # the last heartbeat, or None
    url: str


@dataclass
class Attention:
    """What needs a person, in the order the dashboard shows it: each kind with its action."""

    paused_runs: list[ReminderRun] = field(default_factory=list)
    skipped: list[SkippedGroup] = field(default_factory=list)
    accounts: list[TelegramAccount] = field(default_factory=list)
    channels: list[Channel] = field(default_factory=list)
    stuck_runs: list[StuckRun] = field(default_factory=list)

    @property
    def count(self) -> int:
        return (
            len(self.paused_runs) + len(self.skipped) + len(self.accounts) + len(self.channels) + len(self.stuck_runs)
        )


def _resumable_runs() -> list[ReminderRun]:
    """Reminder runs stopped with groups still pending: paused by their window, or failed part-way."""
    return list(
        ReminderRun.objects.filter(status__in=RESUMABLE, pending__gt=0)
        .select_related("reminder", "account")
        .order_by("-created_at", "-pk")
    )


def _skipped_groups() -> list[SkippedGroup]:
    """Skipped packages by reason; sets only waiting (for volumes, for another worker's copy) need no one."""
    rows = (
        SkippedPackage.objects.exclude(reason__in=PENDING_REASONS)
        .values("reason")
        .annotate(count=Count("pk"))
        .order_by("-count", "reason")
    )
    groups = []
    for row in rows:
        example = SkippedPackage.objects.filter(reason=row["reason"]).values_list("file_name", flat=True).first()
        groups.append(SkippedGroup(row["reason"], SkipReason(row["reason"]).label, row["count"], example or ""))
    return groups


def _failing_channels() -> list[Channel]:
    """Active channels whose last scan failed (cleared by the next good scan)."""
    return list(ingestion_selectors.channel_list().filter(is_active=True).exclude(last_error=""))


def _stuck_runs() -> list[StuckRun]:
    """Running runs whose worker went quiet: the reaper re-queues them every minute unless beat is down."""
    stuck = []
    for kind in run_kinds():
        label = str(kind.model._meta.verbose_name).capitalize()
        for run in kind.model.objects.filter(runs_stuck()).order_by("pk"):
            url = run.get_absolute_url() if hasattr(run, "get_absolute_url") else reverse("operations")
            stuck.append(StuckRun(label=label, pk=run.pk, quiet_since=run.heartbeat_at, url=url))
    return stuck


def dashboard_attention() -> Attention:
    return Attention(
        paused_runs=_resumable_runs(),
        skipped=_skipped_groups(),
        accounts=list(
            TelegramAccount.objects.filter(auth_state__in=[AuthState.EXPIRED, AuthState.RESTRICTED]).order_by("phone")
        ),
        channels=_failing_channels(),
        stuck_runs=_stuck_runs(),
    )
