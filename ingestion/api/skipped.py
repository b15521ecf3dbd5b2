"""Packages ingestion skipped, and retrying them."""

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from core.access import ScopeAndRole
from core.api import idempotent
from ingestion import selectors, services
from ingestion.api.shared import BAD_REQUEST
from ingestion.models import (
    SkippedPackage,
    SkipReason,
)


class SkippedPackageSerializer(serializers.ModelSerializer):
    reason_label = serializers.CharField(source="get_reason_display", read_only=True)

    class Meta:
        model = SkippedPackage
        fields = [
            "id",
            "file_name",
            "file_size",
            "is_multipart",
            "part_count",
            "reason",
            "reason_label",
            "is_retryable",
            "attempt_count",
            "error_message",
            "channel",
            "message_id",
            "message_ids",
            "topic_id",
            "account",
            "created_at",
            "updated_at",
        ]
        read_only_fields = fields


class SkippedFilterSerializer(serializers.Serializer):
    reason = serializers.ChoiceField(choices=SkipReason.choices, required=False)
    channel = serializers.IntegerField(required=False)


class RetryAllSerializer(serializers.Serializer):
    # Checked by the service, whose message lists the reasons to use.
    reason = serializers.CharField(
        required=False,
        allow_blank=True,
        help_text=f"Only skipped packages of this reason: one of {', '.join(SkipReason.values)}. Default: all.",
    )


class RetryResultSerializer(serializers.Serializer):
    message = serializers.CharField()
    retried = serializers.IntegerField(help_text="How many skipped packages the next cycle tries again.")


@extend_schema_view(
    list=extend_schema(summary="List skipped packages, newest failure first", parameters=[SkippedFilterSerializer]),
    retrieve=extend_schema(summary="One skipped package"),
)
class SkippedPackageViewSet(ScopeAndRole, viewsets.ReadOnlyModelViewSet):
    serializer_class = SkippedPackageSerializer

    def get_queryset(self):
        if self.action != "list":
            return selectors.skipped_list()
        filters = SkippedFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return selectors.skipped_list(**filters.validated_data)

    @idempotent
    @extend_schema(
        summary="Retry: delete the row, rewind the channel and ingest it now (else the next cycle tries the set)",
        request=None,
        responses={200: RetryResultSerializer},
    )
    @action(detail=True, methods=["post"])
    def retry(self, request, pk=None):
        skipped = self.get_object()
        run = services.skipped_package_retry(skipped=skipped)
        when = f"run #{run.pk} tries it now" if run else "the next ingestion cycle tries it again"
        message = f"{skipped.file_name} is queued for retry; {when}."
        return Response(RetryResultSerializer({"message": message, "retried": 1}).data)

    @idempotent
    @extend_schema(
        summary="Retry every skipped package, or those of one reason",
        request=RetryAllSerializer,
        responses={200: RetryResultSerializer, 400: BAD_REQUEST},
    )
    @action(detail=False, methods=["post"], url_path="retry-all")
    def retry_all(self, request):
        data = RetryAllSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        count = services.skipped_packages_retry_all(reason=data.validated_data.get("reason", ""))
        message = f"{count} skipped package{'' if count == 1 else 's'} queued for retry."
        return Response(RetryResultSerializer({"message": message, "retried": count}).data)
