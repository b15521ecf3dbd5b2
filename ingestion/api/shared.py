"""What the ingestion API's modules share: the error answers of its schema and the shape of a channel."""

from drf_spectacular.utils import OpenApiResponse, extend_schema_field
from rest_framework import serializers

from core.api import ErrorSerializer
from ingestion.models import (
    AccountChannelMap,
    Channel,
    MapRole,
)
from ingestion.rules import RULE_FIELDS

BAD_REQUEST = OpenApiResponse(ErrorSerializer, description="Invalid input; `message` names the field.")


FORBIDDEN = OpenApiResponse(ErrorSerializer, description="Viewers may not do this.")


CONFLICT = OpenApiResponse(ErrorSerializer, description="No account can read the channel now; `message` says why.")


class ScanStateSerializer(serializers.ModelSerializer):
    """What one reading account knows of a channel: watermark and scan state."""

    in_backoff = serializers.BooleanField(read_only=True, help_text="Idle long enough to be checked every Nth cycle.")

    class Meta:
        model = AccountChannelMap
        fields = [
            "account",
            "last_processed_message_id",
            "scanned_through_message_id",
            "last_scanned_at",
            "last_scan_found_archives",
            "consecutive_empty_scans",
            "in_backoff",
        ]
        read_only_fields = fields


class ChannelSerializer(serializers.ModelSerializer):
    telegram_id = serializers.IntegerField(source="chat.telegram_id", read_only=True)
    title = serializers.CharField(source="chat.title", read_only=True)
    type = serializers.CharField(source="chat.type", read_only=True)
    is_forum = serializers.BooleanField(source="chat.is_forum", read_only=True)
    readers = serializers.SerializerMethodField(help_text="Ids of the accounts that scan this channel.")
    writers = serializers.SerializerMethodField(help_text="Ids of the accounts that upload here (destination).")
    skipped_count = serializers.IntegerField(read_only=True)
    share = serializers.IntegerField(
        read_only=True, help_text="Sets it takes in one cycle: sets_per_cycle, or INGEST_CHANNEL_SETS_PER_CYCLE."
    )
    scan_state = serializers.SerializerMethodField(help_text="Per reading account: watermark and scan state.")

    class Meta:
        model = Channel
        fields = [
            "id",
            "telegram_id",
            "title",
            "type",
            "is_forum",
            "is_active",
            "is_destination",
            "category",
            "expiration_days",
            *RULE_FIELDS,
            "sets_per_cycle",
            "share",
            "readers",
            "writers",
            "skipped_count",
            "scan_state",
            "last_error",
            "created_at",
        ]
        read_only_fields = fields

    @extend_schema_field(ScanStateSerializer(many=True))
    def get_scan_state(self, channel: Channel) -> list[dict]:
        return ScanStateSerializer([m for m in channel.maps.all() if m.role == MapRole.READER], many=True).data

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_readers(self, channel: Channel) -> list[int]:
        return [m.account_id for m in channel.maps.all() if m.role == MapRole.READER]

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_writers(self, channel: Channel) -> list[int]:
        return [m.account_id for m in channel.maps.all() if m.role == MapRole.WRITER]
