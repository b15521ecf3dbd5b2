"""Reads for the dashboard: real counts only, straight from the database."""

from dataclasses import dataclass

from accounts.models import AuthState, Chat, TelegramAccount
from operations.metrics import StateCount, accounts_by_state


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
    by_state = accounts_by_state()
    return DashboardSummary(
        accounts_total=sum(item.count for item in by_state),
        accounts_by_state=by_state,
        accounts_premium=TelegramAccount.objects.filter(is_premium=True).count(),
        # A chat no account sees any more (dropped by a refresh) is not known.
        chats_known=Chat.objects.filter(account_links__isnull=False).distinct().count(),
        accounts_needing_login=list(
            TelegramAccount.objects.filter(auth_state__in=[AuthState.EXPIRED, AuthState.RESTRICTED])
        ),
    )
