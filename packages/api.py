"""API for packages: search over file names and the paths inside archives, one package with its listing."""

from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import serializers, viewsets

from packages import selectors
from packages.models import Package, PackageFile


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
