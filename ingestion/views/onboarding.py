"""Joining, leaving, creating: the Channels page's join and sources panels, the new-destination dialog, and
leaving a channel from its page."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_http_methods, require_POST

from core.forms import error_text
from ingestion import services
from ingestion.forms import CreateDestinationForm, JoinForm, JoinSourcesForm, LeaveForm
from ingestion.models import Channel
from ingestion.views.shared import CHANNELS, channels_context, logged_in_accounts
from telegram.errors import TelegramError

ONBOARDING = "ingestion/onboarding.html"


def _onboarding_answer(request, partial: str, context: dict, *, rows_changed: bool = False):
    """The panel in its new state (and, after a join or a create, every channel row out of band); without HTMX,
    the whole page with the panel in it."""
    if not request.htmx:
        return render(request, CHANNELS, {**channels_context(request), **context})
    html = render_to_string(f"{ONBOARDING}#{partial}", context, request=request)
    if rows_changed:
        html += render_to_string(f"{CHANNELS}#channel-rows-replaced", channels_context(request), request=request)
    return HttpResponse(html)


def _telegram_refusal(form, exc: Exception) -> None:
    form.add_error(None, exc if isinstance(exc, ValidationError) else f"Telegram refused: {exc}")


@login_required
@require_POST
def channel_join_preview(request):
    form = JoinForm(request.POST, accounts=logged_in_accounts())
    preview = None
    if form.is_valid():
        try:
            preview = services.chat_preview(**form.cleaned_data)
        except (ValidationError, TelegramError) as exc:
            _telegram_refusal(form, exc)
    return _onboarding_answer(request, "join-panel", {"join_form": form, "preview": preview})


@login_required
@require_POST
def channel_join(request):
    form = JoinForm(request.POST, accounts=logged_in_accounts())
    if form.is_valid():
        try:
            outcome = services.channel_join(**form.cleaned_data)
        except (ValidationError, TelegramError) as exc:
            _telegram_refusal(form, exc)
        else:
            fresh = JoinForm(
                initial={"account": form.cleaned_data["account"]},
                accounts=logged_in_accounts(),
            )
            context = {"join_form": fresh, "outcome": outcome, "joined_by": form.cleaned_data["account"]}
            return _onboarding_answer(request, "join-panel", context, rows_changed=True)
    return _onboarding_answer(request, "join-panel", {"join_form": form})


@login_required
@require_POST
def channels_join_sources(request):
    form = JoinSourcesForm(request.POST, accounts=logged_in_accounts())
    outcomes = None
    if form.is_valid():
        try:
            outcomes = services.account_join_sources(account=form.cleaned_data["account"])
        except ValidationError as exc:
            form.add_error(None, exc)
    context = {"sources_form": form, "outcomes": outcomes, "joined_by": form.cleaned_data.get("account")}
    return _onboarding_answer(request, "sources-panel", context, rows_changed=bool(outcomes))


@login_required
@require_http_methods(["GET", "POST"])
def destination_create(request):
    """A dialog: a new channel, made by one account, becomes the destination with the writers chosen."""
    accounts = logged_in_accounts()
    form = CreateDestinationForm(request.POST if request.method == "POST" else None, accounts=accounts)
    context = {"create_form": form, "dialog": "create-destination-dialog", "current": services.destination_get()}
    if request.method == "POST" and form.is_valid():
        try:
            created = services.destination_create(**form.cleaned_data)
        except (ValidationError, TelegramError) as exc:
            _telegram_refusal(form, exc)
        else:
            return _onboarding_answer(
                request,
                "create-destination-dialog",
                context | {"created": created, "owner": form.cleaned_data["account"]},
                rows_changed=True,
            )
    return _onboarding_answer(request, "create-destination-dialog", context)


@login_required
@require_POST
def channel_leave(request, pk: int):
    channel = get_object_or_404(Channel.objects.select_related("chat"), pk=pk)
    form = LeaveForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose the account that leaves.")
        return redirect("ingestion:channel-detail", pk=pk)
    account = form.cleaned_data["account"]
    try:
        left = services.channel_leave(channel=channel, account=account)
    except (ValidationError, TelegramError) as exc:
        messages.error(request, error_text(exc) if isinstance(exc, ValidationError) else f"Telegram refused: {exc}.")
    else:
        note = "" if left else " (Telegram had it out already)"
        messages.success(request, f"{account} left {channel.title}{note}; it no longer reads it.")
    return redirect("ingestion:channel-detail", pk=pk)
