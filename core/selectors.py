"""Reads for the dashboard: real counts only, straight from the database."""

from dataclasses import dataclass

from django.db.models import BooleanField, Count, ExpressionWrapper, Q, QuerySet

from accounts.models import AuthState, Chat, TelegramAccount
from core.models import Notification


@dataclass(frozen=True)
class StateCount:
    state: str
    label: str
    count: int


@dataclass(frozen=True)
class DashboardSummary:
    accounts_total: int
    accounts_by_state: list[StateCount]
    accounts_premium: int
    chats_known: int
    accounts_needing_login: list[TelegramAccount]

    @property
    def accounts_authenticated(self) -> int:
        return next(item.count for item in self.accounts_by_state if item.state == AuthState.AUTHENTICATED)


def dashboard_summary() -> DashboardSummary:
    counts = dict(TelegramAccount.objects.values_list("auth_state").annotate(count=Count("pk")).order_by())
    by_state = [StateCount(state=value, label=label, count=counts.get(value, 0)) for value, label in AuthState.choices]
    return DashboardSummary(
        accounts_total=sum(counts.values()),
        accounts_by_state=by_state,
        accounts_premium=TelegramAccount.objects.filter(is_premium=True).count(),
        # A chat no account sees any more (dropped by a refresh) is not known.
        chats_known=Chat.objects.filter(account_links__isnull=False).distinct().count(),
        accounts_needing_login=list(
            TelegramAccount.objects.filter(auth_state__in=[AuthState.EXPIRED, AuthState.RESTRICTED])
        ),
    )


def notifications_unread_count() -> int:
    return Notification.objects.filter(read_at__isnull=True).count()


def notification_latest_unread() -> Notification | None:
    """What the browser announces when it is new (the bell carries it)."""
    return Notification.objects.filter(read_at__isnull=True).order_by("-last_raised_at", "-pk").first()


def notification_list(*, unread_only: bool = False) -> QuerySet[Notification]:
    """Newest first (by when they were last raised)."""
    notifications = Notification.objects.all()
    return notifications.filter(read_at__isnull=True) if unread_only else notifications


def notification_panel(*, limit: int) -> list[Notification]:
    """The bell's drop-down: unread first, then the most recently raised."""
    unread = ExpressionWrapper(Q(read_at__isnull=True), output_field=BooleanField())
    return list(Notification.objects.order_by(unread.desc(), "-last_raised_at", "-pk")[:limit])
