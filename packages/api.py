"""API for packages: search over file names and the paths inside archives, one package with its listing."""

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, extend_schema_view
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from accounts.models import AuthState, Chat, TelegramAccount
from core.api import ErrorSerializer
from packages import selectors, sending
from packages.models import Package, PackageFile, PackageSend, PackageSendPart
from telegram.records import TOPIC_ID_MAX

ERRORS = {
    400: OpenApiResponse(ErrorSerializer, description="Invalid input; `message` names the field."),
    409: OpenApiResponse(ErrorSerializer, description="The action does not fit the current state."),
}


class PackageSerializer(serializers.ModelSerializer):
    # Annotated by packages.selectors: the channels' ids, as /api/channels/ names them.
    source_channel = serializers.IntegerField(read_only=True, allow_null=True)
    destination_channel = serializers.IntegerField(read_only=True, allow_null=True)
    matched_paths = serializers.SerializerMethodField(
        help_text="With a search: some of the paths inside the archive that matched it."
    )

    class Meta:
        model = Package
        fields = [
            "id",
            "file_name",
            "file_size",
            "archive_type",
            "content_hash",
            "is_multipart",
            "part_count",
            "volume_names",
            "file_count",
            "metadata_status",
            "encrypted_files",
            "needs_password",
            "source_channel",
            "source_message_id",
            "source_topic_id",
            "destination_channel",
            "dest_message_ids",
            "creator",
            "tags",
            "created_at",
            "matched_paths",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_matched_paths(self, package: Package) -> list[str]:
        return [file.path for file in getattr(package, "matched_files", [])]


class PackageFileSerializer(serializers.ModelSerializer):
    class Meta:
        model = PackageFile
        fields = ["path", "size", "compressed_size", "crc32", "encrypted"]
        read_only_fields = fields


class PackageDetailSerializer(PackageSerializer):
    files = PackageFileSerializer(many=True, read_only=True, help_text="The archive's listing, by path.")

    class Meta(PackageSerializer.Meta):
        fields = [
            *(name for name in PackageSerializer.Meta.fields if name != "matched_paths"),
            "metadata_error",
            "source_message_ids",
            "dest_part_names",
            "files",
        ]
        read_only_fields = fields


class PackageFilterSerializer(serializers.Serializer):
    search = serializers.CharField(
        required=False, allow_blank=True, help_text="Part of a file name, or of a path inside the archive."
    )


class PackageSendPartSerializer(serializers.ModelSerializer):
    class Meta:
        model = PackageSendPart
        fields = ["position", "name", "message_id", "sent_message_id", "sent_at", "error"]
        read_only_fields = fields


class PackageSendSerializer(serializers.ModelSerializer):
    chat = serializers.IntegerField(source="chat.telegram_id", help_text="Telegram chat id of the chat sent to.")
    chat_title = serializers.CharField(source="chat.title")
    parts = PackageSendPartSerializer(many=True, read_only=True, help_text="Each destination message copied.")

    class Meta:
        model = PackageSend
        fields = [
            "id",
            "title",
            "package",
            "account",
            "chat",
            "chat_title",
            "topic_id",
            "status",
            "parts_total",
            "parts_sent",
            "parts_failed",
            "error",
            "created_at",
            "finished_at",
            "parts",
        ]
        read_only_fields = fields


class PackageSendInSerializer(serializers.Serializer):
    chat = serializers.IntegerField(help_text="Telegram chat id of a chat the account may post in.")
    topic_id = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=TOPIC_ID_MAX, help_text="Forum topic; empty: none."
    )
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.filter(auth_state=AuthState.AUTHENTICATED),
        required=False,
        allow_null=True,
        help_text="The account that copies; empty: one that reads the destination and may post in the chat.",
    )

    def validate_chat(self, value: int) -> Chat:
        chat = Chat.objects.filter(telegram_id=value).first()
        if chat is None:
            raise serializers.ValidationError(f"Chat {value} is unknown; refresh the account's chats.")
        return chat


@extend_schema_view(
    list=extend_schema(
        summary="List packages, newest first; search by name or by a path inside", parameters=[PackageFilterSerializer]
    ),
    retrieve=extend_schema(summary="One package with its file listing"),
)
class PackageViewSet(viewsets.ReadOnlyModelViewSet):
    def get_serializer_class(self):
        return PackageSerializer if self.action == "list" else PackageDetailSerializer

    def get_queryset(self):
        if self.action != "list":
            return selectors.package_search().prefetch_related("files")
        filters = PackageFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return selectors.package_search(query=filters.validated_data.get("search", ""))

    @extend_schema(
        summary="Send to Telegram: copy the package's destination messages to a chat",
        description="Queued, then copied part by part at the account's pace; poll `/api/package-sends/{id}/`.",
        request=PackageSendInSerializer,
        responses={202: PackageSendSerializer, **ERRORS},
    )
    @action(detail=True, methods=["post"])
    def send(self, request, pk=None):
        data = PackageSendInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        send = sending.package_send_create(
            packages=[self.get_object()],
            chat=values["chat"],
            account=values.get("account"),
            topic_id=values.get("topic_id"),
        )
        return Response(PackageSendSerializer(selectors.package_send_get(pk=send.pk)).data, status=202)


@extend_schema_view(
    list=extend_schema(summary="List sends to Telegram, newest first"),
    retrieve=extend_schema(summary="One send to Telegram, with its parts"),
)
class PackageSendViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = PackageSendSerializer

    def get_queryset(self):
        return selectors.package_sends()

    @extend_schema(
        summary="Try the unsent parts again (same random_ids: nothing goes twice)",
        request=None,
        responses={202: PackageSendSerializer, **ERRORS},
    )
    @action(detail=True, methods=["post"])
    def retry(self, request, pk=None):
        send = sending.package_send_retry(send=self.get_object())
        return Response(PackageSendSerializer(selectors.package_send_get(pk=send.pk)).data, status=202)
