"""The Runs page and a run's page: what each run did, polled while it works; "Ingest now" for one account or
all."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from core.formatting import plural
from core.forms import error_text
from core.outcomes import outcome_pills
from ingestion import selectors, services
from ingestion.forms import IngestNowForm
from ingestion.models import IngestionTrigger
from ingestion.views.shared import already_has_run

RUNS = "ingestion/runs.html"
RUN = "ingestion/run_detail.html"
RUNS_PER_PAGE = 25


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
            messages.info(request, already_has_run(run))
    return redirect("ingestion:runs")
