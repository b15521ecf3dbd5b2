"""Notifications in the API: list, read one, mark read."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from core import notifications, selectors
from core.access import ScopeAndRole
from core.models import Notification


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
            "resolved_at",
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
class NotificationViewSet(ScopeAndRole, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
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
