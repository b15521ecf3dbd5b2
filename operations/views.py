"""The dashboard, the operations page, and the machine endpoints (/metrics for Prometheus, /healthz)."""

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest
from rest_framework.authtoken.models import Token

from core import health
from ingestion.selectors import catalog_audit_latest
from operations import metrics, selectors
from operations.api import metrics_token_matches
from operations.prometheus import MetricsCollector


@login_required
def dashboard(request):
    return render(
        request,
        "operations/dashboard.html",
        {"summary": selectors.dashboard_summary(), "metrics": metrics.metrics_collect()},
    )


@login_required
def operations(request):
    """Runs, queues, accounts, packages and skipped packages; the body refreshes itself every 15 s."""
    context = {
        "metrics": metrics.metrics_collect(),
        "health": health.health_check(),
        "alert_queue_backlog": settings.ALERT_QUEUE_BACKLOG,
        "stale_after": settings.WORK_STALE_AFTER_SECONDS,
    }
    if request.htmx:
        return render(request, "operations/operations.html#operations-body", context)
    context.update(audit=catalog_audit_latest(), audit_every_hours=settings.CATALOG_AUDIT_HOURS)
    return render(request, "operations/operations.html", context)


# Machine endpoints --------------------------------------------------------------------------------------


def _machine_authorized(request) -> bool:
    """`Authorization: Bearer <METRICS_TOKEN>` or `Authorization: Token <an operator's API token>`."""
    authorization = request.headers.get("Authorization", "")
    keyword, _, credential = authorization.partition(" ")
    if keyword == "Token" and credential.strip():
        return Token.objects.filter(key=credential.strip(), user__is_active=True).exists()
    return metrics_token_matches(authorization)


@never_cache
@require_GET
def prometheus_metrics(request):
    """Prometheus text exposition; a logged-in session, an API token or METRICS_TOKEN."""
    if not (request.user.is_authenticated or _machine_authorized(request)):
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
