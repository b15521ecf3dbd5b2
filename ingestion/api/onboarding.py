"""Joining, leaving and creating channels with an account (real Telegram requests, made while you wait)."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from accounts.models import TelegramAccount
from core.access import ScopeAndRole
from core.api import idempotent
from ingestion import services
from ingestion.api.destination import DestinationSerializer, destination_data
from ingestion.api.shared import BAD_REQUEST


class JoinSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(), help_text="The account that joins, its id in /api/accounts/."
    )
    link = serializers.CharField(
        allow_blank=True,
        max_length=300,
        help_text="@username, t.me/username, an invite link (t.me/+HASH, t.me/joinchat/HASH) or a tg:// link.",
    )


class ChatPreviewSerializer(serializers.Serializer):
    title = serializers.CharField()
    type = serializers.CharField(help_text="channel, supergroup or group.")
    members_count = serializers.IntegerField(allow_null=True)
    forum = serializers.BooleanField(
        allow_null=True, help_text="Null: Telegram's invite to a private chat does not say before joining."
    )
    already_member = serializers.BooleanField()
    request_needed = serializers.BooleanField(help_text="Its admins approve each join: joining sends a request.")
    username = serializers.CharField(allow_blank=True)


class JoinOutcomeSerializer(serializers.Serializer):
    title = serializers.CharField()
    status = serializers.ChoiceField(choices=list(services.STATUS_WORDS))
    status_label = serializers.CharField(help_text="The status in words.")
    message = serializers.CharField(allow_blank=True, help_text="Why it failed or was not tried.")
    channel = serializers.IntegerField(source="channel.pk", allow_null=True, default=None)


class JoinSourcesSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(), help_text="The (new) account that joins, its id in /api/accounts/."
    )


class DestinationCreateSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(), help_text="The account that creates and owns the channel."
    )
    title = serializers.CharField(allow_blank=True, max_length=300)
    about = serializers.CharField(required=False, allow_blank=True, default="", max_length=1000)
    writers = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(),
        many=True,
        required=False,
        default=list,
        help_text="Other accounts that upload there: each is added as an admin who posts.",
    )


class WriterOutcomeSerializer(serializers.Serializer):
    account = serializers.IntegerField()
    added = serializers.BooleanField()
    message = serializers.CharField(allow_blank=True, help_text="Why Telegram refused to add it.")


class DestinationCreatedSerializer(DestinationSerializer):
    added = WriterOutcomeSerializer(many=True, help_text="Each writer asked for, and whether it was added.")


class OnboardingViewSet(ScopeAndRole, viewsets.ViewSet):
    """Joining, leaving and creating channels with an account (real Telegram requests, made while you wait)."""

    @extend_schema(
        summary="What Telegram tells an account about a chat before it joins (title, members, forum)",
        request=JoinSerializer,
        responses={200: ChatPreviewSerializer, 400: BAD_REQUEST},
    )
    @action(detail=False, methods=["post"])
    def preview(self, request):
        data = JoinSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(ChatPreviewSerializer(services.chat_preview(**data.validated_data)).data)

    @extend_schema(
        summary="Join a channel or group by @username or invite link; the account reads a channel it joins",
        request=JoinSerializer,
        responses={200: JoinOutcomeSerializer, 400: BAD_REQUEST},
    )
    @action(detail=False, methods=["post"])
    def join(self, request):
        data = JoinSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(JoinOutcomeSerializer(services.channel_join(**data.validated_data)).data)

    @extend_schema(
        summary="Make an account join every active source the other accounts read, each outcome reported",
        request=JoinSourcesSerializer,
        responses={200: JoinOutcomeSerializer(many=True), 400: BAD_REQUEST},
    )
    @action(detail=False, methods=["post"], url_path="join-sources")
    def join_sources(self, request):
        data = JoinSourcesSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        outcomes = services.account_join_sources(account=data.validated_data["account"])
        return Response(JoinOutcomeSerializer(outcomes, many=True).data)

    @idempotent
    @extend_schema(
        summary="Create a new channel with an account and make it the destination, its writers added as admins",
        request=DestinationCreateSerializer,
        responses={201: DestinationCreatedSerializer, 400: BAD_REQUEST},
    )
    @action(detail=False, methods=["post"], url_path="create-destination")
    def create_destination(self, request):
        data = DestinationCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        created = services.destination_create(**data.validated_data)
        added = [{"account": writer.pk, "added": not error, "message": error} for writer, error in created.writers]
        return Response(DestinationCreatedSerializer(destination_data() | {"added": added}).data, status=201)
