"""A channel's archive passwords through the API (operators only): hints listed, passwords added and removed."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from core.roles import is_operator
from ingestion.api.shared import BAD_REQUEST, FORBIDDEN
from packages import services as package_services
from packages.models import ChannelPassword
from packages.selectors import channel_passwords
from packages.services import MAX_PASSWORD_CHARS


class ChannelPasswordSerializer(serializers.ModelSerializer):
    hint = serializers.CharField(read_only=True, help_text="Its first and last characters and its length, never more.")

    class Meta:
        model = ChannelPassword
        fields = ["id", "hint", "created_at"]
        read_only_fields = fields


class ChannelPasswordInSerializer(serializers.Serializer):
    password = serializers.CharField(
        max_length=MAX_PASSWORD_CHARS, trim_whitespace=True, help_text="Kept sealed; never shown again."
    )


def _operators_only(request) -> None:
    if not is_operator(request.user):
        raise PermissionDenied("Only operators see or change a channel's archive passwords.")


# The channel viewset's password actions: /api/channels/{id}/passwords/ and passwords/{password_id}/.
# (A comment, not a docstring: the schema would take a docstring as every channel operation's description.)
class ChannelPasswordActions:
    @extend_schema(
        methods=["GET"],
        summary="A channel's archive passwords (operators only): hints, never the passwords",
        responses={200: ChannelPasswordSerializer(many=True), 403: FORBIDDEN},
    )
    @extend_schema(
        methods=["POST"],
        summary="Add an archive password to a channel (operators only); tried on its archives that need one",
        request=ChannelPasswordInSerializer,
        responses={201: ChannelPasswordSerializer, 400: BAD_REQUEST, 403: FORBIDDEN},
    )
    @action(detail=True, methods=["get", "post"])
    def passwords(self, request, pk=None):
        _operators_only(request)
        channel = self.get_object()
        if request.method == "GET":
            return Response(ChannelPasswordSerializer(channel_passwords(chat_id=channel.chat_id), many=True).data)
        data = ChannelPasswordInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        added = package_services.channel_password_add(chat_id=channel.chat_id, password=data.validated_data["password"])
        return Response(ChannelPasswordSerializer(added).data, status=201)

    @extend_schema(
        summary="Remove one of a channel's archive passwords (operators only)",
        request=None,
        responses={204: None, 400: BAD_REQUEST, 403: FORBIDDEN},
    )
    @action(detail=True, methods=["delete"], url_path=r"passwords/(?P<password_id>\d+)")
    def password_remove(self, request, pk=None, password_id=None):
        _operators_only(request)
        channel = self.get_object()
        package_services.channel_password_remove(chat_id=channel.chat_id, password_id=int(password_id))
        return Response(status=204)
