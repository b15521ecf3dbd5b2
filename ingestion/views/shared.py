"""What the ingestion pages share: the Channels page's template and context (the onboarding panels redraw its
rows), who can act for the console on Telegram, and the sentences about runs and the next cycle."""

from accounts.models import AuthState, TelegramAccount
from core.formatting import format_moment, format_relative
from core.models import RunStatus
from ingestion import selectors, services
from ingestion.forms import JoinForm, JoinSourcesForm

CHANNELS = "ingestion/channels.html"


def next_cycle_text() -> str:
    """When the next scheduled ingestion cycle comes, in words."""
    at = selectors.next_cycle_at()
    if at is None:
        return "the next ingestion cycle (once beat runs)"
    return f"the next ingestion cycle, at {format_moment(at)} ({format_relative(at)})"


def logged_in_accounts():
    """Who can join, leave or create: accounts with a live session."""
    return TelegramAccount.objects.filter(auth_state=AuthState.AUTHENTICATED)


def channels_context(request) -> dict:
    accounts = logged_in_accounts()
    return {
        "rows": selectors.channel_rows_page(page_number=request.GET.get("page")),
        "has_destination": services.destination_get() is not None,
        "join_form": JoinForm(accounts=accounts),
        "sources_form": JoinSourcesForm(accounts=accounts),
    }


def already_has_run(run) -> str:
    if run.status == RunStatus.QUEUED:
        return f"{run.account} already has run #{run.pk} queued: it starts as soon as a worker is free."
    return f"{run.account} already has run #{run.pk} {run.outcome.label.lower()}."
