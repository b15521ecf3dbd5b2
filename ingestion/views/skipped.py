"""The Skipped page: what the pipeline passed over and why, retried one by one or all of a reason."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from core.formatting import plural
from ingestion import selectors, services
from ingestion.forms import RetryAllForm
from ingestion.models import Channel, SkippedPackage, SkipReason
from ingestion.views.shared import next_cycle_text

SKIPPED = "ingestion/skipped.html"
SKIPPED_PER_PAGE = 50


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
