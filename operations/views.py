"""The dashboard, the operations page, and the machine endpoints (/metrics for Prometheus, /healthz)."""

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_POST
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from rest_framework.exceptions import AuthenticationFailed

from core import health
from core.formatting import plural
from core.processes import stack_processes
from core.roles import IsOperator, is_operator
from core.runs import runs_reap_stale
from core.selectors import notifications_unread_count
from core.tokens import api_token_from_header
from ingestion.selectors import catalog_audit_latest
from operations import metrics, selectors
from operations.api import metrics_token_matches
from operations.prometheus import MetricsCollector
from reminders.models import ReminderRun
from reminders.services import ReminderStateError, reminder_run_cancel, reminder_run_resume

DASHBOARD = "operations/dashboard.html"


@login_required
@require_GET
def dashboard(request):
    """What needs a person first (each with its action), then the counts."""
    context = {
        "attention": selectors.dashboard_attention(),
        "summary": selectors.dashboard_summary(),
        "metrics": metrics.metrics_collect(),
    }
    return render(request, DASHBOARD, context)


def _attention_answer(request, notice: str, *, is_error: bool = False):
    """After an action in the attention list: the list again with the outcome on top, and the bell's count
    (the notification about what was fixed resolved itself); without HTMX, back to the dashboard."""
    if not request.htmx:
        messages.add_message(request, messages.ERROR if is_error else messages.SUCCESS, notice)
        return redirect("dashboard")
    context = {"attention": selectors.dashboard_attention(), "notice": notice, "notice_is_error": is_error}
    html = render_to_string(f"{DASHBOARD}#attention", context, request=request)
    counts = {"notifications_unread": notifications_unread_count(), "oob_count": True}
    bell = render_to_string("core/notifications.html#bell-count", counts, request=request)
    stat = render_to_string(f"{DASHBOARD}#unread-stat", counts, request=request)
    return HttpResponse(html + bell + stat)


def _reminder_run_action(request, pk: int, action, done: str):
    run = get_object_or_404(ReminderRun, pk=pk)
    try:
        run = action(run=run)
    except ReminderStateError as exc:
        return _attention_answer(request, str(exc), is_error=True)
    return _attention_answer(request, done(run))


@login_required
@require_POST
def attention_run_resume(request, pk: int):
    return _reminder_run_action(
        request, pk, reminder_run_resume, lambda run: f"{run}: resumed, {plural(run.pending, 'group')} to go."
    )


@login_required
@require_POST
def attention_run_cancel(request, pk: int):
    return _reminder_run_action(
        request, pk, reminder_run_cancel, lambda run: f"{run}: canceled, {plural(run.skipped, 'group')} skipped."
    )


@login_required
@require_POST
def attention_runs_requeue(request):
    """Hand stuck runs to another worker now instead of at the reaper's next minute."""
    reaped = runs_reap_stale()
    requeued = sum(len(result.requeued) for result in reaped.values())
    failed = sum(len(result.failed) for result in reaped.values())
    notice = f"Re-queued {plural(requeued, 'stuck run')}" + (
        f"; {plural(failed, 'run')} failed after too many re-queues." if failed else "."
    )
    return _attention_answer(request, notice)


@login_required
def operations(request):
    """Runs, queues, accounts, packages and skipped packages; the body refreshes itself every 15 s."""
    context = {
        "metrics": metrics.metrics_collect(),
        "health": health.health_check(),
        "processes": stack_processes(),
        "alert_queue_backlog": settings.ALERT_QUEUE_BACKLOG,
        "stale_after": settings.WORK_STALE_AFTER_SECONDS,
    }
    if request.htmx:
        return render(request, "operations/operations.html#operations-body", context)
    context.update(audit=catalog_audit_latest(), audit_every_hours=settings.CATALOG_AUDIT_HOURS)
    return render(request, "operations/operations.html", context)


# Machine endpoints --------------------------------------------------------------------------------------


def _machine_authorized(request) -> bool:
    """`Authorization: Bearer <METRICS_TOKEN>` or `Authorization: Token <an operator's usable API token>`."""
    try:
        token = api_token_from_header(request)
    except AuthenticationFailed:
        return False
    if token is not None:
        return is_operator(token.owner)
    return metrics_token_matches(request.headers.get("Authorization", ""))


@never_cache
@require_GET
def prometheus_metrics(request):
    """Prometheus text exposition; an operator's session or API token, or METRICS_TOKEN."""
    if request.user.is_authenticated and not is_operator(request.user) and not _machine_authorized(request):
        return HttpResponse(f"{IsOperator.message}\n", status=403, content_type="text/plain")
    if not (is_operator(request.user) or _machine_authorized(request)):
        response = HttpResponse(
            "Authentication required: log in, or send Authorization: Bearer <METRICS_TOKEN>.\n",
            status=401,
            content_type="text/plain",
        )
        response["WWW-Authenticate"] = 'Bearer realm="stashcast"'
        return response
    registry = CollectorRegistry(auto_describe=False)
    registry.register(MetricsCollector(metrics.metrics_collect()))
    return HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_LATEST)


@never_cache
@require_GET
def healthz(request):
    """No login, for monitors: 503 when the database or Redis is down, or beat has not ticked for
    HEALTH_BEAT_MAX_AGE_SECONDS. `?beat=optional` reports beat without failing on it (compose's web check).

    Strangers get the status alone; a logged-in user, an API token or METRICS_TOKEN also gets each part and
    the errors, whose driver messages name hosts and ports."""
    report = health.health_check(beat_required=request.GET.get("beat") != "optional")
    body = {"status": "ok" if report.healthy else "error"}
    if request.user.is_authenticated or _machine_authorized(request):
        body.update(report.as_dict())
    return JsonResponse(body, status=200 if report.healthy else 503)
