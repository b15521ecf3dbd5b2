"""The destination channel and the accounts that upload there."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.models import TelegramAccount
from core.access import ScopeAndRole
from ingestion import selectors, services
from ingestion.api.shared import BAD_REQUEST, ChannelSerializer
from ingestion.models import (
    Channel,
    MapRole,
)


class DestinationSerializer(serializers.Serializer):
    channel = ChannelSerializer(allow_null=True, help_text="The destination channel; null when none is chosen.")
    writers = serializers.ListField(child=serializers.IntegerField(), help_text="Ids of the accounts that upload.")


class DestinationSetSerializer(serializers.Serializer):
    channel = serializers.PrimaryKeyRelatedField(queryset=Channel.objects.select_related("chat"))
    writers = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(),
        many=True,
        required=False,
        help_text="Accounts that upload packages there; each must be able to post. Default: every one that can.",
    )


def destination_data() -> dict:
    destination = services.destination_get()
    if destination is None:
        return {"channel": None, "writers": []}
    channel = selectors.channel_get(pk=destination.pk)
    return {"channel": channel, "writers": [m.account_id for m in channel.maps.all() if m.role == MapRole.WRITER]}


class DestinationView(ScopeAndRole, APIView):
    @extend_schema(summary="The destination channel and its writers", responses=DestinationSerializer)
    def get(self, request):
        return Response(DestinationSerializer(destination_data()).data)

    @extend_schema(
        summary="Make a channel the destination, with the accounts that upload there",
        request=DestinationSetSerializer,
        responses={200: DestinationSerializer, 400: BAD_REQUEST},
    )
    def put(self, request):
        data = DestinationSetSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.destination_set(channel=data.validated_data["channel"], writers=data.validated_data.get("writers"))
        return Response(DestinationSerializer(destination_data()).data)

    @extend_schema(
        summary="Make a channel the destination (same as PUT)",
        request=DestinationSetSerializer,
        responses={200: DestinationSerializer, 400: BAD_REQUEST},
    )
    def post(self, request):
        return self.put(request)
