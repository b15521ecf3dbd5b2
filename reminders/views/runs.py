"""Activity (every run) and one run's page, and the run actions (Pause, Resume, Cancel, Retry failed, Move).

Run rows and panels poll while their run is queued or running and stop (HTTP 286) once it is not; the run's page
polls its live part (badge, panel, groups) as one, so they never disagree. An action answers with what the form
was in (a row, a panel, the run page's live part), and the same run's other rendering on the page, out of band,
only when the page has it.
"""

from datetime import UTC
from urllib.parse import urlsplit

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseStopPolling

from core.outcomes import outcome_pills
from core.spreadsheets import SpreadsheetWriter
from reminders import selectors, services
from reminders.models import Reminder, ReminderRun, TargetStatus
from reminders.presenters import panel_context, plural
from reminders.services import ReminderStateError
from reminders.views import back_url

ACTIVITY = "reminders/activity.html"
RUN = "reminders/run.html"
RUNS = "reminders/runs.html"  # the run row and run panel, shared by the detail, Activity and run pages
RUNS_PER_PAGE = 25
TARGETS_PER_PAGE = 100


def _polled(html: str, run: ReminderRun) -> HttpResponse:
    return HttpResponse(html) if run.is_live else HttpResponseStopPolling(html)


@login_required
@require_GET
def run_row(request, pk: int):
    """Polled every 2 s while the run is queued or running; HTTP 286 stops the polling once it is not."""
    run = get_object_or_404(selectors.reminder_run_list(), pk=pk)
    context = {"run": run, **_also_shown(request, run)}
    return _polled(render_to_string(f"{RUNS}#run-row", context, request=request), run)


@login_required
@require_GET
def run_panel(request, pk: int):
    run = get_object_or_404(selectors.reminder_run_list(), pk=pk)
    context = {**panel_context(run), **_also_shown(request, run)}
    return _polled(render_to_string(f"{RUNS}#run-panel", context, request=request), run)


def _also_shown(request, run: ReminderRun) -> dict:
    """A polled row or panel whose page also shows the run's other rendering (`?also=`) keeps saying so, for its
    actions' out-of-band answer."""
    return {"row_ids": {run.pk}, "panel_ids": {run.pk}} if request.GET.get("also") in ("row", "panel") else {}


def _run_action(request, pk: int, action, done) -> HttpResponse:
    """Pause, Resume, Cancel, Retry failed or Move; answers with the run's row, panel or whole page part (`as`), the
    outcome in it."""
    run = get_object_or_404(ReminderRun, pk=pk)
    try:
        run = action(run=run)
    except ReminderStateError as exc:
        notice, is_error = str(exc), True
    else:
        notice, is_error = done(run), False
    if not request.htmx:
        messages.add_message(request, messages.ERROR if is_error else messages.SUCCESS, f"Run #{pk}: {notice}")
        return redirect(back_url(request, reverse("reminders:activity")))
    run = selectors.reminder_run_get(pk=pk)
    notices = {"notice": notice, "notice_is_error": is_error}
    shown_as = request.POST.get("as")
    if shown_as == "page":
        # The page's History asks again once the action's audit entry is written (after this answer).
        return HttpResponse(_run_live(request, run, notices), headers={"HX-Trigger-After-Settle": "run-changed"})
    partial, other = ("run-panel", "run-row") if shown_as == "panel" else ("run-row", "run-panel")
    # The same run's row or panel elsewhere on the page (its history) changes with it, out of band, when the page
    # has it (the form says: `also`); a <template> lets a <tr> travel beside a <section>.
    also = request.POST.get("also") == other.removeprefix("run-")
    shown = {"row_ids": {run.pk}, "panel_ids": {run.pk}} if also else {}
    context = {**panel_context(run), **notices, **shown}
    html = render_to_string(f"{RUNS}#{partial}", context, request=request)
    if not also:
        return HttpResponse(html)
    extra = render_to_string(f"{RUNS}#{other}", {**context, "notice": "", "oob_swap": True}, request=request)
    return HttpResponse(f"{html}<template>{extra}</template>")


@login_required
@require_POST
def run_pause(request, pk: int):
    return _run_action(
        request,
        pk,
        services.reminder_run_pause,
        lambda run: f"Paused: it stops now, even mid-wait; {plural(run.pending, 'group')} wait for Resume.",
    )


@login_required
@require_POST
def run_move(request, pk: int):
    """Hand the pending groups of a stopped run to the chosen account; the outcome names the new run."""
    account = selectors.account_find(pk=request.POST.get("account", ""))

    def move(*, run: ReminderRun) -> ReminderRun:
        if account is None:
            raise ReminderStateError("Pick the account that should send the pending groups.")
        return services.reminder_run_move(run=run, account=account)

    return _run_action(
        request,
        pk,
        move,
        lambda moved: f"Moved {plural(moved.total, 'pending group')} to run #{moved.pk}, sent by {moved.account}.",
    )


@login_required
@require_POST
def run_resume(request, pk: int):
    return _run_action(
        request, pk, services.reminder_run_resume, lambda run: f"Resumed: {plural(run.pending, 'group')} to go."
    )


@login_required
@require_POST
def run_cancel(request, pk: int):
    return _run_action(
        request, pk, services.reminder_run_cancel, lambda run: f"Canceled: {plural(run.skipped, 'group')} skipped."
    )


@login_required
@require_POST
def run_retry_failed(request, pk: int):
    return _run_action(
        request,
        pk,
        services.reminder_run_retry_failed,
        lambda run: f"Retrying {plural(run.pending, 'failed group')}.",
    )


@login_required
@require_GET
def activity(request):
    reminder = None
    reminder_id = request.GET.get("reminder", "")
    if reminder_id.isdecimal():
        reminder = Reminder.objects.filter(pk=reminder_id).first()
    counts = selectors.reminder_run_outcome_counts(reminder_id=reminder.pk if reminder else None)
    outcome = request.GET.get("status", "")
    if outcome not in counts:
        outcome = ""
    runs = selectors.reminder_run_filter(outcome=outcome, reminder_id=reminder.pk if reminder else None)
    context = {
        "runs": Paginator(runs, RUNS_PER_PAGE).get_page(request.GET.get("page")),
        "status": outcome,
        "pills": outcome_pills(counts),
        "total": sum(counts.values()),
        "reminder": reminder,
    }
    return render(request, ACTIVITY, context)


@login_required
@require_GET
def run_report(request, pk: int):
    """The run's report as CSV: every group, one row per part (selectors.reminder_run_report)."""
    run = get_object_or_404(selectors.reminder_run_list(), pk=pk)
    # A few rows per group: a run of thousands of groups is a few hundred KB, written at once.
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="reminder-run-{run.pk}.csv"'
    writer = SpreadsheetWriter(response)  # a group's title may read as a formula
    writer.writerow(selectors.REPORT_COLUMNS)
    writer.writerows(_report_line(row) for row in selectors.reminder_run_report(run=run))
    return response


def _report_line(row: dict) -> list:
    sent_at = row["sent_at"].astimezone(UTC).isoformat() if row["sent_at"] else ""
    others = " ".join(str(i) for i in row["album_message_ids"])
    values = {**row, "sent_at": sent_at, "album_message_ids": others}
    return ["" if values[column] is None else values[column] for column in selectors.REPORT_COLUMNS]


def _run_live(request, run: ReminderRun, extra: dict | None = None) -> str:
    """The run page's live part: its badge, panel and groups (as filtered and paged in the page's address: an
    action's answer reads it from the page that posted)."""
    page_query = request.GET if request.method == "GET" else QueryDict(urlsplit(request.htmx.current_url or "").query)
    query = QueryDict(mutable=True)
    for key in ("status", "page"):
        if page_query.get(key):
            query[key] = page_query[key]
    status = query.get("status", "")
    if status not in TargetStatus.values:
        status = ""
    targets = selectors.reminder_run_targets(run_id=run.pk, status=status or None).order_by("pk")
    context = {
        **panel_context(run),
        "targets": Paginator(targets, TARGETS_PER_PAGE).get_page(query.get("page")),
        "status": status,
        "statuses": TargetStatus.choices,
        "on_run_page": True,
        "live_url": reverse("reminders:activity-run", args=[run.pk]) + (f"?{query.urlencode()}" if query else ""),
        **(extra or {}),
    }
    template = f"{RUN}#run-live" if request.htmx else RUN
    return render_to_string(template, context, request=request)


@login_required
@require_GET
def run_detail(request, pk: int):
    """The run and its groups; polled (its live part) every 2 s while the run is queued or running."""
    run = get_object_or_404(selectors.reminder_run_list(), pk=pk)
    if request.htmx and request.GET.get("part") == "history":
        return HttpResponse(render_to_string(f"{RUN}#run-history", {"run": run}, request=request))
    html = _run_live(request, run)
    return _polled(html, run) if request.htmx else HttpResponse(html)
