"""Reads of Telegram accounts for pages and the API."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Count, Q, QuerySet, Sum
from django.utils import timezone

from accounts.ingest_limits import account_ingest_state
from accounts.models import (
    AccountPaceEvent,
    AccountRest,
    AccountSendMinute,
    AuthState,
    ChatTopic,
    PaceEventKind,
    TelegramAccount,
)
from accounts.pace import account_bucket
from telegram.records import USER


def account_list(*, auth_state: str | None = None, is_premium: bool | None = None) -> QuerySet[TelegramAccount]:
    """Accounts with `chats_known` (how many channels and groups the last refresh stored; people not counted)."""
    accounts = TelegramAccount.objects.annotate(
        chats_known=Count("chat_links", filter=~Q(chat_links__chat__type=USER))
    ).order_by("phone")
    if auth_state:
        accounts = accounts.filter(auth_state=auth_state)
    if is_premium is not None:
        accounts = accounts.filter(is_premium=is_premium)
    return accounts


def account_get(*, pk: int) -> TelegramAccount:
    """One account with `chats_known` and `health`; raises TelegramAccount.DoesNotExist."""
    account = account_list().get(pk=pk)
    account.health = account_health(account=account)
    account.ingest = account_ingest_state(account=account)
    return account


@dataclass(frozen=True)
class AccountHealth:
    """How an account is faring with Telegram: what the Accounts page, the API and /metrics show."""

    verdict: str  # one of VERDICTS
    verdict_label: str
    sends_last_hour: int
    sends_last_day: int
    flood_waits_last_day: int
    flood_wait_seconds_last_day: int
    budget_per_minute: float
    ceiling_per_minute: int
    budget_reason: str
    budget_changed_at: datetime | None
    restriction: str  # Telegram's restriction or the login problem; empty when none
    resting_until: datetime | None
    rest_reason: str
    rest_resumes_runs: bool
    sending_stopped: bool
    rests: list[AccountRest]

    @property
    def slowed(self) -> bool:
        return self.budget_per_minute < self.ceiling_per_minute

    @property
    def resting(self) -> bool:
        return self.resting_until is not None


VERDICTS = {
    "restricted": "Restricted by Telegram",
    "needs_login": "Needs a new login",
    "stopped": "Sending stopped",
    "resting": "Resting",
    "slowed": "Slowed by Telegram",
    "healthy": "Healthy",
}


def _verdict(account: TelegramAccount, *, flood_waits: int, slowed: bool) -> str:
    if account.auth_state == AuthState.RESTRICTED:
        return "restricted"
    if account.auth_state != AuthState.AUTHENTICATED:
        return "needs_login"
    if account.sending_stopped:
        return "stopped"
    if account.is_resting:
        return "resting"
    if flood_waits or slowed:
        return "slowed"
    return "healthy"


def account_health(*, account: TelegramAccount, rests: int = 5) -> AccountHealth:
    """The account's health now; its budget is read live from its shared bucket."""
    now = timezone.now()
    sends = AccountSendMinute.objects.filter(account=account, minute__gte=now - timedelta(days=1)).aggregate(
        day=Sum("sends", default=0),
        hour=Sum("sends", filter=Q(minute__gte=now - timedelta(hours=1)), default=0),
    )
    floods = AccountPaceEvent.objects.filter(
        account=account, kind=PaceEventKind.FLOOD_WAIT, at__gte=now - timedelta(days=1)
    ).aggregate(count=Count("pk"), seconds=Sum("wait_seconds", default=0))
    budget = account_bucket(account=account).state().per_minute
    ceiling = settings.REMINDER_MAX_SEND_PER_MINUTE
    verdict = _verdict(account, flood_waits=floods["count"], slowed=budget < ceiling)
    restriction = ""
    if account.auth_state != AuthState.AUTHENTICATED:
        restriction = f"{account.get_auth_state_display()}" + (f": {account.last_error}" if account.last_error else "")
    return AccountHealth(
        verdict=verdict,
        verdict_label=VERDICTS[verdict],
        sends_last_hour=sends["hour"],
        sends_last_day=sends["day"],
        flood_waits_last_day=floods["count"],
        flood_wait_seconds_last_day=floods["seconds"],
        budget_per_minute=round(budget, 1),
        ceiling_per_minute=ceiling,
        budget_reason=account.send_budget_reason,
        budget_changed_at=account.send_budget_changed_at,
        restriction=restriction,
        resting_until=account.resting_until if account.is_resting else None,
        rest_reason=account.rest_reason if account.is_resting else "",
        rest_resumes_runs=account.rest_resumes_runs,
        sending_stopped=account.sending_stopped,
        rests=list(account.rests.all()[:rests]),
    )


def accounts_with_health(accounts) -> list[TelegramAccount]:
    """The accounts, each with `.health`."""
    accounts = list(accounts)
    for account in accounts:
        account.health = account_health(account=account)
        account.ingest = account_ingest_state(account=account)
    return accounts


def chat_topics(*, chat_ids) -> dict[int, list[ChatTopic]]:
    """The known topics of these chats (General not among them), by chat pk, each list by title."""
    topics: dict[int, list[ChatTopic]] = {}
    for topic in ChatTopic.objects.filter(chat_id__in=list(chat_ids)).order_by("title", "topic_id"):
        topics.setdefault(topic.chat_id, []).append(topic)
    return topics
