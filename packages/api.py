"""API for packages: search and filters over names and the paths inside archives, one package with its listing,
creator and tags edited one by one or in bulk, and the answer to "likely the same as …"."""

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from core.api import ErrorSerializer
from packages import selectors, services
from packages.models import Package, PackageFile, RepackDecision
from packages.selectors import SORTS, PackageFilters

BAD_REQUEST = OpenApiResponse(ErrorSerializer, description="Invalid input; `message` says what to change.")


class PackageSerializer(serializers.ModelSerializer):
    # Annotated by packages.selectors: the channels' ids, as /api/channels/ names them.
    source_channel = serializers.IntegerField(read_only=True, allow_null=True)
    destination_channel = serializers.IntegerField(read_only=True, allow_null=True)
    matched_paths = serializers.SerializerMethodField(
        help_text="With a search: some of the paths inside the archive that matched it."
    )
    matched_count = serializers.IntegerField(
        read_only=True, allow_null=True, default=None, help_text="With a search: how many paths inside matched it."
    )
    likely_same_as = serializers.PrimaryKeyRelatedField(
        read_only=True,
        allow_null=True,
        help_text="An earlier package whose listing this one (nearly) repeats: likely a repack.",
    )
    likely_same_overlap = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="Percent of the larger listing the two have in common."
    )
    repack_decision = serializers.ChoiceField(
        choices=RepackDecision.choices,
        allow_blank=True,
        read_only=True,
        help_text='The operator\'s answer to "likely the same as"; empty until answered.',
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
            "listing_fingerprint",
            "likely_same_as",
            "likely_same_overlap",
            "repack_decision",
            "created_at",
            "matched_paths",
            "matched_count",
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
            *(name for name in PackageSerializer.Meta.fields if name not in ("matched_paths", "matched_count")),
            "metadata_error",
            "source_message_ids",
            "dest_part_names",
            "files",
        ]
        read_only_fields = fields


class PackageFilterSerializer(serializers.Serializer):
    search = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="Word prefixes, or (from 3 characters) any part of a file name or of a path inside the archive.",
    )
    creator = serializers.CharField(required=False, allow_blank=True, max_length=255)
    tag = serializers.CharField(required=False, allow_blank=True, max_length=100)
    channel = serializers.IntegerField(required=False, min_value=1, help_text="The source channel's id.")
    type = serializers.CharField(required=False, allow_blank=True, max_length=10, help_text="zip, rar, 7z, model…")
    size_min = serializers.IntegerField(required=False, min_value=0, help_text="Bytes.")
    size_max = serializers.IntegerField(required=False, min_value=0, help_text="Bytes.")
    added_from = serializers.DateField(required=False)
    added_to = serializers.DateField(required=False, help_text="Inclusive.")
    needs_password = serializers.BooleanField(required=False, default=False)
    likely_repacks = serializers.BooleanField(
        required=False, default=False, help_text="Only packages marked likely the same as another (not kept)."
    )
    sort = serializers.ChoiceField(choices=list(SORTS), required=False, default="newest")

    def validate(self, data):
        if (
            data.get("size_min") is not None
            and data.get("size_max") is not None
            and data["size_min"] > data["size_max"]
        ):
            raise serializers.ValidationError({"size_max": "size_max is below size_min; swap them."})
        if data.get("added_from") and data.get("added_to") and data["added_from"] > data["added_to"]:
            raise serializers.ValidationError({"added_to": "added_to is before added_from; swap them."})
        return data

    def filters(self) -> PackageFilters:
        data = self.validated_data
        return PackageFilters(
            query=data.get("search", "").strip(),
            needs_password=data["needs_password"],
            creator=data.get("creator", "").strip(),
            tag=data.get("tag", "").strip(),
            channel=data.get("channel"),
            archive_type=data.get("type", "").strip(),
            size_min=data.get("size_min"),
            size_max=data.get("size_max"),
            added_from=data.get("added_from"),
            added_to=data.get("added_to"),
            sort=data["sort"],
            likely_repacks=data["likely_repacks"],
        )


class PackageEditSerializer(serializers.Serializer):
    creator = serializers.CharField(required=False, allow_blank=True, max_length=255)
    tags = serializers.ListField(child=serializers.CharField(allow_blank=True), required=False)


class PackageBulkEditSerializer(serializers.Serializer):
    packages = serializers.ListField(child=serializers.IntegerField(min_value=1), help_text="Package ids.")
    creator = serializers.CharField(required=False, max_length=255, help_text="Omit to leave each creator.")
    add_tags = serializers.ListField(child=serializers.CharField(), required=False, default=list)
    remove_tags = serializers.ListField(child=serializers.CharField(), required=False, default=list)


class BulkEditResultSerializer(serializers.Serializer):
    message = serializers.CharField()
    edited = serializers.IntegerField()


class RepackDecisionSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(
        choices=RepackDecision.choices,
        help_text="kept: keep both (the mark is dismissed); skip_copies: future copies with this listing count as "
        "duplicates of the original and are not uploaded.",
    )


@extend_schema_view(
    list=extend_schema(
        summary="List packages; search by name or by a path inside, filter and sort",
        parameters=[PackageFilterSerializer],
    ),
    retrieve=extend_schema(summary="One package with its file listing"),
    partial_update=extend_schema(
        summary="Set a package's creator or tags",
        request=PackageEditSerializer,
        responses={200: PackageDetailSerializer, 400: BAD_REQUEST},
    ),
)
class PackageViewSet(mixins.UpdateModelMixin, viewsets.ReadOnlyModelViewSet):
    http_method_names = ["get", "post", "patch", "head", "options"]

    def get_serializer_class(self):
        return PackageSerializer if self.action == "list" else PackageDetailSerializer

    def get_queryset(self):
        if self.action != "list":
            return selectors.package_search().prefetch_related("files")
        filters = PackageFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return selectors.package_search(filters=filters.filters())

    def partial_update(self, request, *args, **kwargs):
        package = self.get_object()
        data = PackageEditSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.package_edit(
            package=package, creator=data.validated_data.get("creator"), tags=data.validated_data.get("tags")
        )
        return Response(PackageDetailSerializer(self.get_queryset().get(pk=package.pk)).data)

    @extend_schema(
        summary="Set the creator of, or add and remove tags on, many packages",
        request=PackageBulkEditSerializer,
        responses={200: BulkEditResultSerializer, 400: BAD_REQUEST},
    )
    @action(detail=False, methods=["post"], url_path="bulk-edit")
    def bulk_edit(self, request):
        data = PackageBulkEditSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        count = services.packages_bulk_edit(
            package_ids=data.validated_data["packages"],
            creator=data.validated_data.get("creator"),
            add_tags=data.validated_data["add_tags"],
            remove_tags=data.validated_data["remove_tags"],
        )
        message = f"{count} package{'' if count == 1 else 's'} edited."
        return Response(BulkEditResultSerializer({"message": message, "edited": count}).data)

    @extend_schema(
        summary='Answer "likely the same as …": keep both, or skip future copies of this listing',
        request=RepackDecisionSerializer,
        responses={200: PackageDetailSerializer, 400: BAD_REQUEST, 409: OpenApiResponse(ErrorSerializer)},
    )
    @action(detail=True, methods=["post"], url_path="repack-decision")
    def repack_decision(self, request, pk=None):
        package = self.get_object()
        data = RepackDecisionSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.package_repack_decide(package=package, decision=data.validated_data["decision"])
        return Response(PackageDetailSerializer(self.get_queryset().get(pk=package.pk)).data)
