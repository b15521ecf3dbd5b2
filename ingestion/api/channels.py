"""Channels and supergroups the accounts are in: list, read, change, which accounts read them, leaving.

The rules and password actions are mixins of their own modules (rules.py, passwords.py)."""

from django.db import transaction
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from accounts.models import TelegramAccount
from core.access import ScopeAndRole
from ingestion import selectors, services
from ingestion.api.passwords import ChannelPasswordActions
from ingestion.api.rules import ChannelRulesActions, ChannelUpdateSerializer, RulesSerializer
from ingestion.api.shared import BAD_REQUEST, ChannelSerializer


class ReaderSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(), help_text="The account's id in /api/accounts/."
    )


class LeaveSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(), help_text="The account that leaves, its id in /api/accounts/."
    )


class LeftSerializer(serializers.Serializer):
    left_on_telegram = serializers.BooleanField(help_text="False: the account was not in it on Telegram any more.")
    channel = ChannelSerializer()


class ChannelFilterSerializer(serializers.Serializer):
    is_active = serializers.BooleanField(required=False, allow_null=True, default=None)


@extend_schema_view(
    list=extend_schema(
        summary="List channels and supergroups the accounts are in", parameters=[ChannelFilterSerializer]
    ),
    retrieve=extend_schema(summary="One channel"),
)
class ChannelViewSet(
    ScopeAndRole,
    ChannelPasswordActions,
    ChannelRulesActions,
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    viewsets.GenericViewSet,
):
    serializer_class = ChannelSerializer

    def get_queryset(self):
        channels = selectors.channel_list()
        if self.action == "list":
            filters = ChannelFilterSerializer(data=self.request.query_params)
            filters.is_valid(raise_exception=True)
            if filters.validated_data["is_active"] is not None:
                channels = channels.filter(is_active=filters.validated_data["is_active"])
        return channels

    @extend_schema(
        summary="Change whether a channel is scanned, its category, its raw-file retention or its share of a cycle",
        request=ChannelUpdateSerializer,
        responses={200: ChannelSerializer, 400: BAD_REQUEST},
    )
    def partial_update(self, request, pk=None):
        channel = self.get_object()
        data = ChannelUpdateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        given = data.validated_data
        rules = {name: given.pop(name) for name in RulesSerializer().fields if name in given}
        with transaction.atomic():
            if rules:
                services.channel_rules_update(channel=channel, **rules)
            services.channel_update(channel=channel, **given)
        return Response(ChannelSerializer(selectors.channel_get(pk=channel.pk)).data)

    @extend_schema(
        summary="Let an account read this channel (it must be a member)",
        request=ReaderSerializer,
        responses={200: ChannelSerializer, 400: BAD_REQUEST},
    )
    @action(detail=True, methods=["post"])
    def readers(self, request, pk=None):
        channel = self.get_object()
        data = ReaderSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.channel_link_account(channel=channel, account=data.validated_data["account"])
        return Response(ChannelSerializer(selectors.channel_get(pk=channel.pk)).data)

    @extend_schema(
        summary="Stop an account reading this channel",
        request=ReaderSerializer,
        responses={200: ChannelSerializer, 400: BAD_REQUEST},
    )
    @extend_schema(
        summary="An account leaves this channel on Telegram and stops reading it here",
        request=LeaveSerializer,
        responses={200: LeftSerializer, 400: BAD_REQUEST},
    )
    @action(detail=True, methods=["post"])
    def leave(self, request, pk=None):
        channel = self.get_object()
        data = LeaveSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        left = services.channel_leave(channel=channel, account=data.validated_data["account"])
        return Response(
            LeftSerializer({"left_on_telegram": left, "channel": selectors.channel_get(pk=channel.pk)}).data
        )

    @action(detail=True, methods=["post"], url_path="readers/remove")
    def readers_remove(self, request, pk=None):
        channel = self.get_object()
        data = ReaderSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.channel_unlink_account(channel=channel, account=data.validated_data["account"])
        return Response(ChannelSerializer(selectors.channel_get(pk=channel.pk)).data)
