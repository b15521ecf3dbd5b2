"""Sends to Telegram: what a send and its parts show, what starting one takes (for a package or a collection), and
the sends' list, each one and its retry."""

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from accounts.models import AuthState, Chat, TelegramAccount
from core.access import ScopeAndRole
from core.api import OutcomeFields, idempotent
from core.roles import is_operator
from packages import selectors, sending
from packages.api.shared import ERRORS, id_field
from packages.models import Collection, PackageSend, PackageSendPart
from packages.passwords import caption_masked
from telegram.records import PREMIUM_CAPTION_MAX, TOPIC_ID_MAX


class PackageSendPartSerializer(serializers.ModelSerializer):
    caption = serializers.SerializerMethodField(
        help_text="What the recipient reads under this file (passwords in it masked for viewers)."
    )

    class Meta:
        model = PackageSendPart
        fields = ["position", "name", "caption", "message_id", "sent_message_id", "sent_at", "error"]
        read_only_fields = fields

    def get_caption(self, part: PackageSendPart) -> str:
        request = self.context.get("request")
        return part.caption if request and is_operator(request.user) else caption_masked(part.caption)


class PackageSendSerializer(OutcomeFields, serializers.ModelSerializer):
    chat = serializers.IntegerField(
        source="chat.telegram_id", help_text="Telegram id of the chat sent to, or the user id of the person."
    )
    chat_title = serializers.CharField(source="chat.title")
    parts = PackageSendPartSerializer(many=True, read_only=True, help_text="Each destination message copied.")

    class Meta:
        model = PackageSend
        fields = [
            "id",
            "title",
            "package",
            "collection",
            "account",
            "chat",
            "chat_title",
            "topic_id",
            "status",
            "outcome",
            "outcome_text",
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
    chat = id_field(
        help_text="Telegram id of a chat the account may post in, or the user id of a person it has a private chat "
        "with (people are stored with its chats when they are refreshed). A person has no topics."
    )
    topic_id = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=TOPIC_ID_MAX,
        help_text="Forum topic; empty: none (a person has no topics).",
    )
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.filter(auth_state=AuthState.AUTHENTICATED),
        required=False,
        allow_null=True,
        help_text="The account that copies; empty: one that reads the destination and may post in the chat.",
    )
    caption = serializers.CharField(
        required=False,
        allow_null=True,
        allow_blank=True,
        trim_whitespace=False,
        max_length=PREMIUM_CAPTION_MAX * 2,
        help_text="What the recipient reads under the file. Absent or null: each package's source caption; "
        '"": none; text: this caption under the first file. Never the catalog line. At most 1,024 characters '
        "as Telegram counts them (UTF-16), 2,048 when the sending account is Premium.",
    )

    def validate_chat(self, value: int) -> Chat:
        chat = Chat.objects.filter(telegram_id=value).first()
        if chat is None:
            raise serializers.ValidationError(f"Chat or person {value} is unknown; refresh the account's chats.")
        return chat


def send_start(request, *, packages, collection: Collection | None = None) -> Response:
    """Queue a send of `packages` (a collection's, when it is given) to the chat the request names."""
    data = PackageSendInSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    values = data.validated_data
    send = sending.package_send_create(
        packages=packages,
        chat=values["chat"],
        account=values.get("account"),
        topic_id=values.get("topic_id"),
        collection=collection,
        caption=values.get("caption"),
    )
    return _send_answer(request, send)


def _send_answer(request, send: PackageSend) -> Response:
    """202: the send, queued, as its poll will show it."""
    return Response(
        PackageSendSerializer(selectors.package_send_get(pk=send.pk), context={"request": request}).data, status=202
    )


@extend_schema_view(
    list=extend_schema(summary="List sends to Telegram, newest first"),
    retrieve=extend_schema(summary="One send to Telegram, with its parts"),
)
class PackageSendViewSet(ScopeAndRole, viewsets.ReadOnlyModelViewSet):
    serializer_class = PackageSendSerializer

    def get_queryset(self):
        return selectors.package_sends()

    @idempotent
    @extend_schema(
        summary="Try the unsent parts again (same random_ids: nothing goes twice)",
        request=None,
        responses={202: PackageSendSerializer, **ERRORS},
    )
    @action(detail=True, methods=["post"])
    def retry(self, request, pk=None):
        return _send_answer(request, sending.package_send_retry(send=self.get_object()))
