"""The Channels page and a channel's page: its row's actions, the destination dialog, its rules, topics and
"Ingest now".

Row actions answer with the row in its new state, errors inside it, so HTMX swaps one <tr>; without
HTMX they redirect back with a message.
"""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts.models import TelegramAccount
from core.errors import OperatorError
from core.forms import error_text
from ingestion import selectors, services
from ingestion.forms import (
    ChannelActiveForm,
    ChannelRulesForm,
    ChannelSettingsForm,
    DestinationForm,
    ReaderForm,
    TopicFetchForm,
)
from ingestion.models import Channel, MapRole, StartPoint
from ingestion.views.passwords import passwords_context
from ingestion.views.shared import CHANNELS, already_has_run, channels_context
from packages.selectors import packages_from_chat

CHANNEL = "ingestion/channel_detail.html"
CHANNEL_PACKAGES = 10
CHANNEL_SCANS = 15


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


@login_required
@require_GET
def channel_list(request):
    return render(request, CHANNELS, channels_context(request))


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
            return render(request, f"{CHANNELS}#channel-rows-replaced", channels_context(request))
    context = {"row": row, "form": form, "current": services.destination_get(), "dialog": "destination-dialog"}
    if request.htmx:
        return render(request, f"{CHANNELS}#destination-dialog", context)
    return render(request, CHANNELS, {**channels_context(request), **context})


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
        **passwords_context(channel),
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
        messages.info(request, already_has_run(run))
    return redirect("ingestion:run-detail", pk=run.pk)


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
