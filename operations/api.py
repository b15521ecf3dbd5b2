"""The metrics API (/api/metrics/) and who may read metrics without a session (scrapers)."""

import hmac

from django.conf import settings
from drf_spectacular.utils import extend_schema
from rest_framework import permissions, serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.api import AccountHealthSerializer
from core.access import ScopeAndRole
from core.roles import IsOperator
from operations import metrics


def metrics_token_matches(authorization: str) -> bool:
    """`Authorization: Bearer <METRICS_TOKEN>`; never true while METRICS_TOKEN is empty."""
    keyword, _, credential = authorization.partition(" ")
    token = settings.METRICS_TOKEN
    return keyword == "Bearer" and bool(token) and hmac.compare_digest(credential.strip().encode(), token.encode())


class HasMetricsToken(permissions.BasePermission):
    """For Prometheus and other scrapers that have no user."""

    def has_permission(self, request, view) -> bool:
        return metrics_token_matches(request.headers.get("Authorization", ""))


class RunKindMetricsSerializer(serializers.Serializer):
    kind = serializers.CharField(source="key", help_text="ingestion_run, reminder_run, ...")
    label = serializers.CharField()
    queued = serializers.IntegerField()
    running = serializers.IntegerField()
    stuck = serializers.IntegerField(help_text="Running without a heartbeat for WORK_STALE_AFTER_SECONDS.")
    paused = serializers.IntegerField()
    finished_24h = serializers.IntegerField(help_text="Runs that ended (any outcome) in the last 24 hours.")
    failed_24h = serializers.IntegerField()
    average_seconds_24h = serializers.FloatField(
        allow_null=True, help_text="Average claim-to-end time of the runs that ended in the last 24 hours."
    )
    longest_running_seconds = serializers.FloatField(allow_null=True)
    oldest_queued_seconds = serializers.FloatField(allow_null=True)


class QueueBacklogSerializer(serializers.Serializer):
    name = serializers.CharField()
    waiting = serializers.IntegerField(help_text="Tasks in the queue's list on the broker, not yet taken.")


class StateCountSerializer(serializers.Serializer):
    state = serializers.CharField()
    label = serializers.CharField()
    count = serializers.IntegerField()


class DayCountSerializer(serializers.Serializer):
    day = serializers.DateField()
    count = serializers.IntegerField()


class ReasonCountSerializer(serializers.Serializer):
    reason = serializers.CharField()
    label = serializers.CharField()
    count = serializers.IntegerField()


class BeatSerializer(serializers.Serializer):
    state = serializers.CharField(help_text="ok, or late (missed 3 ticks)")
    age_seconds = serializers.FloatField(allow_null=True, help_text="Since the last tick; null: never ticked.")


class AlertSerializer(serializers.Serializer):
    key = serializers.CharField()
    severity = serializers.CharField(help_text="error or warning")
    title = serializers.CharField()
    message = serializers.CharField()
    url = serializers.CharField()


class AccountHealthMetricsSerializer(serializers.Serializer):
    phone = serializers.CharField()
    health = AccountHealthSerializer()


class MetricsSerializer(serializers.Serializer):
    generated_at = serializers.DateTimeField()
    runs = RunKindMetricsSerializer(many=True)
    queues = QueueBacklogSerializer(many=True, allow_null=True, help_text="null when the broker did not answer.")
    broker_error = serializers.CharField()
    accounts_by_state = StateCountSerializer(many=True)
    packages_per_day = DayCountSerializer(many=True, help_text="The last 14 days (UTC), oldest first.")
    skipped_by_reason = ReasonCountSerializer(many=True)
    notifications_unread = serializers.IntegerField()
    beat = BeatSerializer(allow_null=True)
    alerts = AlertSerializer(many=True)
    account_health = AccountHealthMetricsSerializer(
        many=True, help_text="Each switched-on account's sending health (empty when Redis did not answer)."
    )


class MetricsView(ScopeAndRole, APIView):
    login_required = False  # the metrics token is a credential of its own
    permission_classes = [IsOperator | HasMetricsToken]

    @extend_schema(
        summary="Runs, queues, accounts, packages, skipped packages and alerts right now",
        description="An operator's session, `Authorization: Token <an operator's API token>` or `Authorization: Bearer "
        "<METRICS_TOKEN>`. The same figures in Prometheus text format are at `/metrics`.",
        responses=MetricsSerializer,
    )
    def get(self, request):
        return Response(MetricsSerializer(metrics.metrics_collect()).data)
