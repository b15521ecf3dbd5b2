"""Ingestion runs and their channel scans, and starting one by hand."""

from django.db.models import Prefetch
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import serializers, viewsets
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import TelegramAccount
from core.access import ScopeAndRole
from core.api import OutcomeFields, idempotent
from core.models import RunStatus
from ingestion import selectors, services
from ingestion.api.shared import BAD_REQUEST
from ingestion.models import (
    RUN_OUTCOME_FILTERS,
    ChannelScan,
    IngestionRun,
    IngestionTrigger,
)


class ChannelScanSerializer(serializers.ModelSerializer):
    channel_title = serializers.CharField(source="channel.title", read_only=True)

    class Meta:
        model = ChannelScan
        fields = [
            "channel",
            "channel_title",
            "scanned_at",
            "action",
            "reason",
            "topics",
            "requests",
            "messages",
            "found",
            "ingested",
            "duplicates",
            "skipped",
            "filtered",
            "seconds",
        ]
        read_only_fields = fields


class IngestionRunSerializer(OutcomeFields, serializers.ModelSerializer):
    progress_percent = serializers.IntegerField(read_only=True, help_text="Of the current file, 0–100.")
    scans = serializers.SerializerMethodField(help_text="What the run did with each channel and why, in order.")

    class Meta:
        model = IngestionRun
        fields = [
            "id",
            "account",
            "trigger",
            "channel",
            "status",
            "outcome",
            "outcome_text",
            "requests_sent",
            "messages_scanned",
            "archives_found",
            "duplicates",
            "ingested",
            "skipped",
            "filtered",
            "bytes_downloaded",
            "bytes_uploaded",
            "current_channel",
            "current_topic",
            "current_file",
            "current_step",
            "current_bytes_done",
            "current_bytes_total",
            "progress_percent",
            "error",
            "worker_id",
            "created_at",
            "claimed_at",
            "heartbeat_at",
            "finished_at",
            "scans",
        ]
        read_only_fields = fields

    @extend_schema_field(ChannelScanSerializer(many=True))
    def get_scans(self, run: IngestionRun) -> list[dict]:
        return ChannelScanSerializer(run.scans.all(), many=True).data  # prefetched in order by the view


class RunFilterSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=RunStatus.choices, required=False)
    outcome = serializers.ChoiceField(choices=list(RUN_OUTCOME_FILTERS), required=False)
    account = serializers.IntegerField(required=False)


@extend_schema_view(
    list=extend_schema(summary="List ingestion runs, newest first", parameters=[RunFilterSerializer]),
    retrieve=extend_schema(summary="One ingestion run, with its live progress while it runs"),
)
class IngestionRunViewSet(ScopeAndRole, viewsets.ReadOnlyModelViewSet):
    serializer_class = IngestionRunSerializer

    def get_queryset(self):
        scans = Prefetch(
            "scans", queryset=ChannelScan.objects.select_related("channel__chat").order_by("scanned_at", "pk")
        )
        if self.action != "list":
            return selectors.run_list().prefetch_related(scans)
        filters = RunFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return selectors.run_list(**filters.validated_data).prefetch_related(scans)


class TriggerSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(),
        required=False,
        allow_null=True,
        help_text="Ingest with this account only; by default every logged-in account that reads an active channel.",
    )


class TriggerResultSerializer(serializers.Serializer):
    message = serializers.CharField()
    runs = IngestionRunSerializer(many=True, help_text="The runs queued (or already open, for one account).")


class IngestionTriggerView(ScopeAndRole, APIView):
    @idempotent
    @extend_schema(
        summary="Ingest now: queue a run per account, or for one account",
        description="An account that already has a run queued or running keeps it; no second run is queued.",
        request=TriggerSerializer,
        responses={200: TriggerResultSerializer, 400: BAD_REQUEST},
    )
    def post(self, request):
        data = TriggerSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        account = data.validated_data.get("account")
        if account is None:
            runs = services.ingestion_cycle_start(trigger=IngestionTrigger.MANUAL)
            message = f"Queued {len(runs)} run{'' if len(runs) == 1 else 's'}."
        else:
            run, created = services.ingestion_run_request(account=account, trigger=IngestionTrigger.MANUAL)
            runs = [run]
            message = f"Queued run {run.pk}." if created else f"Run {run.pk} is already {run.outcome.label.lower()}."
        result = {"message": message, "runs": [selectors.run_get(pk=run.pk) for run in runs]}
        return Response(TriggerResultSerializer(result).data)
