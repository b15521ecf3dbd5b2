"""The media API: upload a picture or file for a reminder part (the same bytes, the same id), list them."""

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response

from core.access import ScopeAndRole
from reminders import selectors, services
from reminders.api.shared import ERRORS
from reminders.models import MediaFile


class MediaFileSerializer(serializers.ModelSerializer):
    class Meta:
        model = MediaFile
        fields = ["id", "name", "size", "mime_type", "sha256", "created_at"]
        read_only_fields = fields


class MediaUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="A picture or file for a reminder part.")


@extend_schema_view(
    list=extend_schema(summary="List uploaded media"),
    retrieve=extend_schema(summary="One uploaded media"),
)
class MediaFileViewSet(ScopeAndRole, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = MediaFileSerializer
    parser_classes = [MultiPartParser, FormParser]

    def get_queryset(self):
        return selectors.media_list()

    @extend_schema(
        summary="Upload a media (multipart, field `file`)",
        description="The same bytes uploaded twice give the same id.",
        request={"multipart/form-data": MediaUploadSerializer},
        responses={201: MediaFileSerializer, 400: ERRORS[400]},
    )
    def create(self, request):
        data = MediaUploadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        media = services.media_create(file=upload, name=upload.name)
        return Response(MediaFileSerializer(media).data, status=status.HTTP_201_CREATED)
