"""The catalog: audits against the destination, repairing what they find missing, rebuilding from the destination."""

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from core import task_names
from core.access import ScopeAndRole
from core.api import ErrorSerializer, idempotent
from core.errors import OperatorError
from ingestion import services
from ingestion.audit import catalog_audit_repair_missing
from ingestion.models import (
    CatalogAudit,
)


class CatalogAuditSerializer(serializers.ModelSerializer):
    missing = serializers.JSONField(
        help_text='Packages whose destination messages are gone: [{"package", "file_name", "message_ids"}].'
    )
    orphans = serializers.JSONField(
        help_text='Destination documents in no package: [{"message_id", "name", '
        '"content_hash"}] ("" = no catalog line).'
    )
    coverage = serializers.JSONField(
        help_text='Per source channel and fetched topic: [{"channel", "title", '
        '"topic_id", "topic_title", "scanned_through", "last_scan", "gaps"}].'
    )

    class Meta:
        model = CatalogAudit
        fields = [
            "id",
            "created_at",
            "finished_at",
            "packages_checked",
            "documents_checked",
            "missing",
            "orphans",
            "coverage",
            "error",
        ]
        read_only_fields = fields


class QueuedSerializer(serializers.Serializer):
    message = serializers.CharField()


class RepairResultSerializer(serializers.Serializer):
    message = serializers.CharField()
    packages = serializers.IntegerField(help_text="Packages marked to be uploaded again by the next cycle.")


@extend_schema_view(
    list=extend_schema(summary="Catalog audits, newest first"),
    retrieve=extend_schema(summary="One catalog audit: missing destination messages, orphans, coverage"),
)
class CatalogAuditViewSet(ScopeAndRole, viewsets.ReadOnlyModelViewSet):
    serializer_class = CatalogAuditSerializer
    queryset = CatalogAudit.objects.all()

    @extend_schema(summary="Audit now (queued)", request=None, responses={202: QueuedSerializer})
    def create(self, request):
        services.catalog_task_send(task_names.CATALOG_AUDIT)
        return Response({"message": "Audit queued."}, status=202)

    @idempotent
    @extend_schema(
        summary="Upload again the packages this audit found without their destination messages",
        request=None,
        responses={200: RepairResultSerializer, 409: OpenApiResponse(ErrorSerializer, description="Not the latest.")},
    )
    @action(detail=True, methods=["post"], url_path="repair-missing")
    def repair_missing(self, request, pk=None):
        count = catalog_audit_repair_missing(audit=self.get_object())
        return Response({"message": f"{count} packages will be uploaded again.", "packages": count})


class CatalogRebuildView(ScopeAndRole, APIView):
    @idempotent
    @extend_schema(
        summary="Rebuild or repair the catalog from the destination channel (queued)",
        description="Reads the catalog line of every destination document; a notification gives the outcome.",
        request=None,
        responses={202: QueuedSerializer, 409: OpenApiResponse(ErrorSerializer, description="No destination.")},
    )
    def post(self, request):
        if services.destination_get() is None:
            raise OperatorError("No destination channel is set: pick one first (/api/destination/).")
        services.catalog_task_send(task_names.CATALOG_REBUILD)
        return Response({"message": "Rebuild queued."}, status=202)
