"""Core API: errors as JSON with a `message` a person can act on; metrics; notifications."""

import hmac

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from core import metrics as core_metrics
from core import notifications, selectors
from core.models import Notification


def _first_message(detail) -> str:
    if isinstance(detail, dict):
        for field_name, value in detail.items():
            text = _first_message(value)
            return text if field_name in {"non_field_errors", "detail"} else f"{field_name}: {text}"
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    return str(detail)


def exception_handler(exc, context):
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        response.data = {"message": _first_message(response.data), "errors": response.data}
    elif isinstance(response.data, dict) and "detail" in response.data:
        response.data = {"message": str(response.data["detail"])}
    return response


def error_response(message: str, *, status_code: int = status.HTTP_400_BAD_REQUEST, **extra) -> Response:
    return Response({"message": message, **extra}, status=status_code)


# Metrics and notifications ------------------------------------------------------------------------------


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


class MetricsView(APIView):
    permission_classes = [permissions.IsAuthenticated | HasMetricsToken]

    @extend_schema(
        summary="Runs, queues, accounts, packages, skipped packages and alerts right now",
        description="A logged-in session, `Authorization: Token <API token>` or `Authorization: Bearer "
        "<METRICS_TOKEN>`. The same figures in Prometheus text format are at `/metrics`.",
        responses=MetricsSerializer,
    )
    def get(self, request):
        return Response(MetricsSerializer(core_metrics.metrics_collect()).data)


class NotificationSerializer(serializers.ModelSerializer):
    is_read = serializers.BooleanField(read_only=True)

    class Meta:
        model = Notification
        fields = [
            "id",
            "type",
            "severity",
            "title",
            "message",
            "context",
            "subject",
            "url",
            "count",
            "is_read",
            "read_at",
            "created_at",
            "last_raised_at",
        ]
        read_only_fields = fields


class NotificationsMarkedSerializer(serializers.Serializer):
    marked = serializers.IntegerField(help_text="How many notifications were unread and are now read.")


@extend_schema_view(
    list=extend_schema(
        summary="List notifications, most recently raised first",
        parameters=[OpenApiParameter("unread", bool, description="1: only unread notifications")],
    ),
    retrieve=extend_schema(summary="One notification"),
)
class NotificationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = NotificationSerializer
    queryset = Notification.objects.all()

    def get_queryset(self):
        if self.action == "list":
            unread = self.request.query_params.get("unread", "").lower() in {"1", "true", "yes"}
            return selectors.notification_list(unread_only=unread)
        return Notification.objects.all()

    @extend_schema(summary="Mark a notification read", request=None, responses=NotificationSerializer)
    @action(detail=True, methods=["post"])
    def read(self, request, pk=None):
        notification = notifications.notification_mark_read(notification=self.get_object())
        return Response(NotificationSerializer(notification).data)

    @extend_schema(summary="Mark every notification read", request=None, responses=NotificationsMarkedSerializer)
    @action(detail=False, methods=["post"], url_path="read-all")
    def read_all(self, request):
        return Response({"marked": notifications.notifications_mark_all_read()})


class ErrorSerializer(serializers.Serializer):
    """Every API error: one "Error" component in the schema."""

    message = serializers.CharField(help_text="What went wrong and what to do about it.")
    retry_after = serializers.IntegerField(required=False, help_text="Seconds Telegram asks to wait (429 only).")
