"""Forum topics, one per reading account and topic: list, read, fetch on or off."""

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.response import Response

from core.access import ScopeAndRole
from ingestion import selectors, services
from ingestion.api.shared import BAD_REQUEST
from ingestion.models import (
    TopicProgress,
)


class TopicSerializer(serializers.ModelSerializer):
    in_backoff = serializers.BooleanField(read_only=True, help_text="Idle long enough to be checked every Nth cycle.")
    channel = serializers.IntegerField(source="map.channel_id", read_only=True)
    account = serializers.IntegerField(source="map.account_id", read_only=True, help_text="The reading account.")

    class Meta:
        model = TopicProgress
        fields = [
            "id",
            "channel",
            "account",
            "topic_id",
            "title",
            "fetch_enabled",
            "last_processed_message_id",
            "last_scanned_at",
            "last_scan_found_archives",
            "consecutive_empty_scans",
            "in_backoff",
        ]
        read_only_fields = [name for name in fields if name != "fetch_enabled"]


class TopicFetchSerializer(serializers.Serializer):
    fetch_enabled = serializers.BooleanField(help_text="Scan this topic; off keeps its watermark where it is.")


class TopicFilterSerializer(serializers.Serializer):
    channel = serializers.IntegerField(required=False, help_text="Only this channel's topics.")


@extend_schema_view(
    list=extend_schema(
        summary="List forum topics, one per reading account and topic", parameters=[TopicFilterSerializer]
    ),
    retrieve=extend_schema(summary="One forum topic of one reading account"),
)
class TopicViewSet(ScopeAndRole, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = TopicSerializer

    def get_queryset(self):
        if self.action != "list":
            return selectors.topic_list()
        filters = TopicFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return selectors.topic_list(channel=filters.validated_data.get("channel"))

    @extend_schema(
        summary="Turn fetching of a topic on or off",
        request=TopicFetchSerializer,
        responses={200: TopicSerializer, 400: BAD_REQUEST},
    )
    def partial_update(self, request, pk=None):
        data = TopicFetchSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        topic = services.topic_set_fetch(topic=self.get_object(), fetch_enabled=data.validated_data["fetch_enabled"])
        return Response(TopicSerializer(topic).data)
