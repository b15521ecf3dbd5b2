"""The Channels, channel detail, Runs and Skipped pages.

Row actions answer with the row in its new state, errors inside it, so HTMX swaps one <tr>; without
HTMX they redirect back with a message.
"""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect, HttpResponseStopPolling

from accounts.models import AuthState, TelegramAccount
from core import task_names
from core.errors import OperatorError
from core.formatting import format_moment, format_relative, plural
from core.forms import error_text
from core.models import RunStatus
from core.outcomes import outcome_pills
from ingestion import audit as audit_module
from ingestion import selectors, services
from ingestion.forms import (
    ChannelActiveForm,
    ChannelRulesForm,
    ChannelSettingsForm,
    CreateDestinationForm,
    DestinationForm,
    IngestNowForm,
    JoinForm,
    JoinSourcesForm,
    LeaveForm,
    ReaderForm,
    RetryAllForm,
    TopicFetchForm,
)
from ingestion.models import CatalogAudit, Channel, IngestionTrigger, MapRole, SkippedPackage, SkipReason, StartPoint
from packages import services as package_services
from packages.selectors import channel_passwords, packages_from_chat
from telegram.errors import TelegramError

CHANNELS = "ingestion/channels.html"
CHANNEL = "ingestion/channel_detail.html"
RUNS = "ingestion/runs.html"
RUN = "ingestion/run_detail.html"
SKIPPED = "ingestion/skipped.html"
RUNS_PER_PAGE = 25
SKIPPED_PER_PAGE = 50
CHANNEL_PACKAGES = 10
CHANNEL_SCANS = 15


def next_cycle_text() -> str:
    """When the next scheduled ingestion cycle comes, in words."""
    at = selectors.next_cycle_at()
    if at is None:
        return "the next ingestion cycle (once beat runs)"
    return f"the next ingestion cycle, at {format_moment(at)} ({format_relative(at)})"


# Channels ---------------------------------------------------------------------------------------------------


def _channel_row(request, pk: int, *, notice: str = "", notice_is_error: bool = False, settings_form=None):
    """The channel's row for HTMX; otherwise back to the list, the notice as a message."""
    row = selectors.channel_row(get_object_or_404(selectors.channel_list(), pk=pk))
    if not request.htmx:
        if settings_form is not None:
            notice_is_error = True
            notice = " ".join(message for errors in settings_form.errors.values() for message in errors)
        if notice:
            level = messages.ERROR if notice_is_error else messages.SUCCESS
            messages.add_message(request, level, f"{row.channel.title}: {notice}")
        return redirect("ingestion:channels")
    context = {"row": row, "notice": notice, "notice_is_error": notice_is_error, "settings_form": settings_form}
    return render(request, f"{CHANNELS}#channel-row", context)


def _logged_in_accounts():
    """Who can join, leave or create: accounts with a live session."""
    return TelegramAccount.objects.filter(auth_state=AuthState.AUTHENTICATED)


def _channels_context(request) -> dict:
    accounts = _logged_in_accounts()
    return {
        "rows": selectors.channel_rows_page(page_number=request.GET.get("page")),
        "has_destination": services.destination_get() is not None,
        "join_form": JoinForm(accounts=accounts),
        "sources_form": JoinSourcesForm(accounts=accounts),
    }


@login_required
@require_GET
def channel_list(request):
    return render(request, CHANNELS, _channels_context(request))


@login_required
@require_POST
def channel_set_active(request, pk: int):
    channel = get_object_or_404(Channel, pk=pk)
    form = ChannelActiveForm(request.POST)
    form.is_valid()  # a checkbox: absent means off
    try:
        channel = services.channel_update(channel=channel, is_active=form.cleaned_data["is_active"])
    except ValidationError as exc:
        return _channel_row(request, pk, notice=error_text(exc), notice_is_error=True)
    if not channel.is_active:
        notice = "Paused: no longer scanned."
    elif not channel.maps.filter(role=MapRole.READER).exists():
        notice = "Active, but no account reads it yet: add a reader."
    else:
        notice = "Active: scanned every cycle."
    return _channel_row(request, pk, notice=notice)


@login_required
@require_POST
def channel_settings(request, pk: int):
    channel = get_object_or_404(Channel, pk=pk)
    form = ChannelSettingsForm(request.POST)
    if form.is_valid():
        try:
            services.channel_update(
                channel=channel,
                category=form.cleaned_data["category"],
                expiration_days=form.cleaned_data["expiration_days"],
                sets_per_cycle=form.cleaned_data["sets_per_cycle"],
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            return _channel_row(request, pk, notice="Saved.")
    return _channel_row(request, pk, settings_form=form)


@login_required
@require_POST
def channel_add_reader(request, pk: int):
    channel = get_object_or_404(Channel.objects.select_related("chat"), pk=pk)
    form = ReaderForm(request.POST)
    if not form.is_valid():
        return _channel_row(request, pk, notice="Choose an account to read this channel.", notice_is_error=True)
    account = form.cleaned_data["account"]
    try:
        services.channel_link_account(channel=channel, account=account)
    except ValidationError as exc:
        return _channel_row(request, pk, notice=error_text(exc), notice_is_error=True)
    return _channel_row(request, pk, notice=f"{account} reads it now.")


@login_required
@require_POST
def channel_remove_reader(request, pk: int, account_pk: int):
    channel = get_object_or_404(Channel, pk=pk)
    account = get_object_or_404(TelegramAccount, pk=account_pk)
    services.channel_unlink_account(channel=channel, account=account)
    return _channel_row(request, pk, notice=f"{account} no longer reads it.")


@login_required
@require_http_methods(["GET", "POST"])
def channel_make_destination(request, pk: int):
    """A dialog: choose the writers, then this channel becomes the one destination."""
    row = selectors.channel_row(get_object_or_404(selectors.channel_list(), pk=pk))
    initial = {"writers": row.writers or row.posters}
    form = DestinationForm(request.POST if request.method == "POST" else None, posters=row.posters, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.destination_set(channel=row.channel, writers=list(form.cleaned_data["writers"]))
        except ValidationError as exc:
            form.add_error(None, error_text(exc))
        else:
            if not request.htmx:
                messages.success(request, f"{row.channel.title} is the destination now.")
                return redirect("ingestion:channels")
            # The dialog closes, and every row is redrawn: the old destination changed too.
            return render(request, f"{CHANNELS}#channel-rows-replaced", _channels_context(request))
    context = {"row": row, "form": form, "current": services.destination_get(), "dialog": "destination-dialog"}
    if request.htmx:
        return render(request, f"{CHANNELS}#destination-dialog", context)
    return render(request, CHANNELS, {**_channels_context(request), **context})


@login_required
@require_GET
def channel_detail(request, pk: int):
    channel = get_object_or_404(selectors.channel_list(), pk=pk)
    packages = packages_from_chat(chat=channel.chat)
    context = {
        "row": selectors.channel_row(channel),
        "maps": selectors.channel_maps(channel=channel),
        "topics": selectors.topic_list(channel=channel),
        "package_count": packages.count(),
        "packages": packages[:CHANNEL_PACKAGES],
        "scans": selectors.channel_scans(channel=channel)[:CHANNEL_SCANS],
        "open_run": selectors.channel_open_run(channel=channel),
        "next_cycle_at": selectors.next_cycle_at(),
        "passed_over": selectors.channel_skips_passed_over(channel=channel),
        "max_attempts": settings.INGEST_MAX_SKIP_ATTEMPTS,
        **_passwords_context(channel),
        "rules_form": ChannelRulesForm.of(channel),
        "rules_described": selectors.channel_rules_described(channel=channel),
    }
    return render(request, CHANNEL, context)


@login_required
@require_POST
def channel_rules(request, pk: int):
    """Save the channel's rules, or try them first: Preview (the last 100 documents) or Count history. Choosing
    the whole history shows its count before it is saved."""
    channel = get_object_or_404(selectors.channel_list(), pk=pk)
    form = ChannelRulesForm(request.POST)
    context = {"channel": channel, "rules_form": form}
    if form.is_valid():
        changes, action = form.changes(), request.POST.get("action", "save")
        to_history = changes["start_from"] == StartPoint.HISTORY != channel.start_from
        try:
            if action == "preview":
                rules = services.channel_rules_try(channel=channel, **changes)
                context["preview"] = services.channel_rules_preview(channel=channel, rules=rules)
            elif action == "count" or (to_history and not request.POST.get("confirm_history")):
                rules = services.channel_rules_try(channel=channel, **changes)
                context["history"] = services.channel_history_count(channel=channel, rules=rules)
                context["confirm_history"] = to_history
            else:
                channel = services.channel_rules_update(channel=channel, **changes)
                context.update(channel=channel, rules_form=ChannelRulesForm.of(channel), saved=True)
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        except OperatorError as exc:
            form.add_error(None, str(exc))
    if not request.htmx:
        if form.errors:
            messages.error(request, " ".join(message for errors in form.errors.values() for message in errors))
        elif context.get("saved"):
            messages.success(request, f"{channel.title}: rules saved.")
        return redirect("ingestion:channel-detail", pk=pk)
    return render(request, f"{CHANNEL}#channel-rules", context)


@login_required
@require_POST
def channel_ingest_now(request, pk: int):
    """Queue a run of this channel alone, then show that run's page."""
    channel = get_object_or_404(selectors.channel_list(), pk=pk)
    try:
        run, created = services.channel_ingest_now(channel=channel)
    except ValidationError as exc:
        messages.error(request, error_text(exc))
        return redirect("ingestion:channel-detail", pk=pk)
    if created:
        messages.success(request, f"Ingesting {channel.title} now with {run.account}: run #{run.pk}.")
    else:
        messages.info(request, _already_has_run(run))
    return redirect("ingestion:run-detail", pk=run.pk)


def _already_has_run(run) -> str:
    if run.status == RunStatus.QUEUED:
        return f"{run.account} already has run #{run.pk} queued: it starts as soon as a worker is free."
    return f"{run.account} already has run #{run.pk} {run.outcome.label.lower()}."


@login_required
@require_POST
def channel_topic_fetch(request, pk: int, topic_pk: int):
    topic = get_object_or_404(selectors.topic_list(channel=pk), pk=topic_pk)
    form = TopicFetchForm(request.POST)
    form.is_valid()  # a checkbox: absent means off
    topic = services.topic_set_fetch(topic=topic, fetch_enabled=form.cleaned_data["fetch_enabled"])
    if not request.htmx:
        return redirect("ingestion:channel-detail", pk=pk)
    return render(request, f"{CHANNEL}#topic-row", {"topic": topic, "channel_pk": pk})


# Runs -------------------------------------------------------------------------------------------------------


@login_required
@require_GET
def run_list(request):
    counts = selectors.run_outcome_counts()
    outcome = request.GET.get("status", "")
    if outcome not in counts:
        outcome = ""
    runs = Paginator(selectors.run_list(outcome=outcome), RUNS_PER_PAGE).get_page(request.GET.get("page"))
    context = {
        "runs": runs,
        "status": outcome,
        "pills": outcome_pills(counts),
        "total": sum(counts.values()),
        "form": IngestNowForm(accounts=selectors.accounts_that_ingest()),
    }
    return render(request, RUNS, context)


@login_required
@require_GET
def run_detail(request, pk: int):
    """One run: what it did with each channel and why, what it found, took and skipped. Polls while it works."""
    run = get_object_or_404(selectors.run_list(), pk=pk)
    context = {
        "run": run,
        "scans": selectors.run_scans(run=run),
        "skipped": selectors.run_skipped(run=run),
        "ingested": selectors.run_packages(run=run),
    }
    if request.htmx:
        html = render_to_string(f"{RUN}#run-body", context, request=request)
        return HttpResponse(html) if run.is_live else HttpResponseStopPolling(html)
    return render(request, RUN, context)


@login_required
@require_GET
def run_row(request, pk: int):
    """Polled every 2 s while the run is queued or running; HTTP 286 stops the polling once it is over."""
    run = get_object_or_404(selectors.run_list(), pk=pk)
    html = render_to_string(f"{RUNS}#run-row", {"run": run}, request=request)
    return HttpResponse(html) if run.is_live else HttpResponseStopPolling(html)


@login_required
@require_POST
def runs_ingest_now(request):
    form = IngestNowForm(request.POST, accounts=selectors.accounts_that_ingest())
    if not form.is_valid():
        messages.error(request, "Choose a logged-in account that reads an active channel, or all accounts.")
        return redirect("ingestion:runs")
    account = form.cleaned_data["account"]
    if account is None:
        queued = services.ingestion_cycle_start(trigger=IngestionTrigger.MANUAL)
        if queued:
            names = ", ".join(str(run.account) for run in queued)
            messages.success(request, f"Queued {plural(len(queued), 'run')}: {names}.")
        elif not selectors.accounts_that_ingest().exists():
            messages.error(request, "No logged-in account reads an active channel; set one up on the Channels page.")
        else:
            messages.info(request, "Every reading account already has a run queued or running.")
        return redirect("ingestion:runs")
    try:
        run, created = services.ingestion_run_request(account=account, trigger=IngestionTrigger.MANUAL)
    except ValidationError as exc:
        messages.error(request, error_text(exc))
    else:
        if created:
            messages.success(request, f"Queued run #{run.pk} for {account}.")
        else:
            messages.info(request, _already_has_run(run))
    return redirect("ingestion:runs")


# Skipped packages -------------------------------------------------------------------------------------------


def _channel_filter(request) -> Channel | None:
    channel_id = request.GET.get("channel", "")
    if not channel_id.isdecimal():
        return None
    return Channel.objects.select_related("chat").filter(pk=channel_id).first()


@login_required
@require_GET
def skipped_list(request):
    reason = request.GET.get("reason", "")
    if reason not in SkipReason.values:
        reason = ""
    channel = _channel_filter(request)
    counts = selectors.skipped_reason_counts(channel=channel)
    pills = [
        {"value": value, "label": label, "count": counts.get(value, 0)}
        for value, label in SkipReason.choices
        if counts.get(value) or value == reason
    ]
    rows = Paginator(selectors.skipped_list(reason=reason, channel=channel), SKIPPED_PER_PAGE)
    context = {
        "rows": rows.get_page(request.GET.get("page")),
        "reason": reason,
        "channel": channel,
        "pills": pills,
        "total": sum(counts.values()),
        "retry_all_form": RetryAllForm(initial={"reason": reason}),
        "next_cycle_at": selectors.next_cycle_at(),
        "max_attempts": settings.INGEST_MAX_SKIP_ATTEMPTS,
    }
    return render(request, SKIPPED, context)


@login_required
@require_POST
def skipped_retry(request, pk: int):
    skipped = SkippedPackage.objects.select_related("channel__chat").filter(pk=pk).first()
    run = services.skipped_package_retry(skipped=skipped) if skipped is not None else None
    when = f"run #{run.pk} tries it now" if run is not None else f"{next_cycle_text()} tries it"
    if not request.htmx:
        if skipped is not None:
            messages.success(request, f"{skipped.file_name} is queued for retry: {when}.")
        return redirect("ingestion:skipped")
    return render(request, f"{SKIPPED}#retried-row", {"skipped": skipped, "run": run, "when": when})


@login_required
@require_POST
def skipped_retry_all(request):
    form = RetryAllForm(request.POST)
    if form.is_valid():
        reason = form.cleaned_data["reason"]
        count = services.skipped_packages_retry_all(reason=reason)
        what = SkipReason(reason).label.lower() if reason else "skipped"
        messages.success(
            request,
            f"{plural(count, 'package')} ({what}) queued for retry; {next_cycle_text()} tries them.",
        )
    else:
        messages.error(request, "Unknown reason; choose one from the list.")
    url = reverse("ingestion:skipped")
    # HTMX asked (it shows the confirmation): a full reload shows the message and what is left.
    return HttpResponseClientRedirect(url) if request.htmx else redirect(url)


# The catalog audit, on the Operations page ------------------------------------------------------------------


@login_required
@require_POST
def catalog_audit_now(request):
    services.catalog_task_send(task_names.CATALOG_AUDIT)
    messages.success(request, "Audit queued: the results show here when it is done.")
    return redirect(reverse("operations") + "#catalog-audit")


@login_required
@require_POST
def catalog_rebuild_now(request):
    if services.destination_get() is None:
        messages.error(request, "No destination channel is set: pick one on the Channels page first.")
    else:
        services.catalog_task_send(task_names.CATALOG_REBUILD)
        messages.success(request, "Rebuild queued: a notification says what it added and repaired.")
    return redirect(reverse("operations") + "#catalog-audit")


@login_required
@require_POST
def catalog_repair_missing(request, pk: int):
    audit = get_object_or_404(CatalogAudit, pk=pk)
    try:
        count = audit_module.catalog_audit_repair_missing(audit=audit)
    except OperatorError as exc:
        messages.error(request, error_text(exc))
    else:
        messages.success(request, f"{plural(count, 'package')} will be uploaded again by the next cycle.")
    return redirect(reverse("operations") + "#catalog-audit")


# Joining, leaving, creating ---------------------------------------------------------------------------------

ONBOARDING = "ingestion/onboarding.html"


def _onboarding_answer(request, partial: str, context: dict, *, rows_changed: bool = False):
    """The panel in its new state (and, after a join or a create, every channel row out of band); without HTMX,
    the whole page with the panel in it."""
    if not request.htmx:
        return render(request, CHANNELS, {**_channels_context(request), **context})
    html = render_to_string(f"{ONBOARDING}#{partial}", context, request=request)
    if rows_changed:
        html += render_to_string(f"{CHANNELS}#channel-rows-replaced", _channels_context(request), request=request)
    return HttpResponse(html)


def _telegram_refusal(form, exc: Exception) -> None:
    form.add_error(None, exc if isinstance(exc, ValidationError) else f"Telegram refused: {exc}")


# A channel's archive passwords -----------------------------------------------------------------------------------


def _passwords_context(channel: Channel, **extra) -> dict:
    return {"channel": channel, "channel_passwords": channel_passwords(chat_id=channel.chat_id), **extra}


def _passwords_card(request, channel: Channel, **extra) -> HttpResponse:
    if not request.htmx:
        if extra.get("password_error"):
            messages.error(request, extra["password_error"])
        return redirect("ingestion:channel-detail", pk=channel.pk)
    status = 400 if extra.get("password_error") else 200
    return render(request, "ingestion/channel_passwords.html", _passwords_context(channel, **extra), status=status)


@login_required
@require_POST
def channel_join_preview(request):
    form = JoinForm(request.POST, accounts=_logged_in_accounts())
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
    form = JoinForm(request.POST, accounts=_logged_in_accounts())
    if form.is_valid():
        try:
            outcome = services.channel_join(**form.cleaned_data)
        except (ValidationError, TelegramError) as exc:
            _telegram_refusal(form, exc)
        else:
            fresh = JoinForm(
                initial={"account": form.cleaned_data["account"]},
                accounts=_logged_in_accounts(),
            )
            context = {"join_form": fresh, "outcome": outcome, "joined_by": form.cleaned_data["account"]}
            return _onboarding_answer(request, "join-panel", context, rows_changed=True)
    return _onboarding_answer(request, "join-panel", {"join_form": form})


@login_required
@require_POST
def channels_join_sources(request):
    form = JoinSourcesForm(request.POST, accounts=_logged_in_accounts())
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
    accounts = _logged_in_accounts()
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


@login_required
@require_POST
def channel_password_add(request, pk: int):
    channel = get_object_or_404(Channel, pk=pk)
    try:
        package_services.channel_password_add(chat_id=channel.chat_id, password=request.POST.get("password", ""))
    except ValidationError as exc:
        return _passwords_card(request, channel, password_error=error_text(exc))
    return _passwords_card(request, channel, password_notice="Password added; the next archives that need one try it.")


@login_required
@require_POST
def channel_password_remove(request, pk: int, password_pk: int):
    channel = get_object_or_404(Channel, pk=pk)
    try:
        package_services.channel_password_remove(chat_id=channel.chat_id, password_id=password_pk)
    except ValidationError as exc:
        return _passwords_card(request, channel, password_error=error_text(exc))
    return _passwords_card(request, channel, password_notice="Password removed.")
