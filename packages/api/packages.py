"""Packages: search and filters over file names and the paths inside archives, one package with its listing and
previews (and picking one), creator and tags edited one by one or in bulk, the answer to "likely the same as …",
signed download links, and a send of one package to Telegram."""

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from core.access import ScopeAndRole
from core.api import ErrorSerializer, idempotent
from core.roles import is_operator
from core.sizes import size_text
from packages import previews, selectors, services
from packages.api.sends import PackageSendInSerializer, PackageSendSerializer, send_start
from packages.api.shared import BAD_REQUEST, ERRORS, id_field, preview_url
from packages.models import GroupingRule, Package, PackageFile, PackagePreview, PasswordSource, RepackDecision
from packages.selectors import SORTS, PackageFilters
from packages.services.downloads import DownloadLinkRefused, download_links_make


class PackageSerializer(serializers.ModelSerializer):
    # Annotated by packages.selectors: the channels' ids, as /api/channels/ names them.
    source_channel = serializers.IntegerField(read_only=True, allow_null=True)
    destination_channel = serializers.IntegerField(read_only=True, allow_null=True)
    file_size_text = serializers.SerializerMethodField(
        help_text='The size as the console writes it ("651.6 KB": decimal units, as file_size in bytes).'
    )
    matched_paths = serializers.SerializerMethodField(
        help_text="With a search: some of the paths inside the archive that matched it."
    )
    preview_url = serializers.SerializerMethodField(
        help_text="The preview's thumbnail (JPEG, for logged-in users), or null when the package has none."
    )
    collection_rule = serializers.ChoiceField(
        choices=GroupingRule.choices,
        allow_blank=True,
        read_only=True,
        help_text="Why the package is in its collection ('' outside one).",
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

    caption = serializers.SerializerMethodField(
        help_text="The source post's text (empty for packages ingested before captions were kept); passwords in it "
        "are masked for viewers."
    )
    password_source = serializers.ChoiceField(
        choices=PasswordSource.choices,
        allow_blank=True,
        read_only=True,
        help_text="Which password opened its listing: one found in the caption, or one of the channel's ('' none).",
    )

    class Meta:
        model = Package
        fields = [
            "id",
            "file_name",
            "caption",
            "password_source",
            "file_size",
            "file_size_text",
            "archive_type",
            "content_hash",
            "is_multipart",
            "part_count",
            "volume_names",
            "whole_by",
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
            "preview",
            "preview_url",
            "collection",
            "collection_rule",
            "matched_paths",
            "matched_count",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "preview": {"help_text": "The chosen preview's id (see `previews`)."},
        }

    def _caption(self, package: Package) -> selectors.CaptionShown:
        request = self.context.get("request")
        return selectors.package_caption_shown(package=package, operator=bool(request and is_operator(request.user)))

    def get_caption(self, package: Package) -> str:
        return self._caption(package).text

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_preview_url(self, package: Package) -> str | None:
        return preview_url(package.pk, package.preview_id)

    def get_file_size_text(self, package: Package) -> str:
        return size_text(package.file_size)

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_matched_paths(self, package: Package) -> list[str]:
        return [file.path for file in getattr(package, "matched_files", [])]


class PackageFileSerializer(serializers.ModelSerializer):
    class Meta:
        model = PackageFile
        fields = ["path", "size", "compressed_size", "crc32", "encrypted"]
        read_only_fields = fields


class PackagePreviewSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField(help_text="The thumbnail (JPEG), for logged-in users.")

    class Meta:
        model = PackagePreview
        fields = ["id", "source", "path", "source_message_id", "width", "height", "url"]
        read_only_fields = fields

    @extend_schema_field(serializers.URLField())
    def get_url(self, preview: PackagePreview) -> str:
        return preview_url(preview.package_id, preview.pk)


class PackageDetailSerializer(PackageSerializer):
    volume_captions = serializers.SerializerMethodField(
        help_text="Each volume's own caption, in order, where a volume says more than the set's (masked for viewers)."
    )
    password = serializers.SerializerMethodField(
        help_text="The password that opened its listing, for operators; null for viewers and when none was needed."
    )
    files = PackageFileSerializer(many=True, read_only=True, help_text="The archive's listing, by path.")
    previews = PackagePreviewSerializer(
        many=True, read_only=True, help_text="Every image it can show: the photo posted with it, those inside."
    )

    class Meta(PackageSerializer.Meta):
        fields = [
            *(name for name in PackageSerializer.Meta.fields if name not in ("matched_paths", "matched_count")),
            "metadata_error",
            "source_message_ids",
            "dest_part_names",
            "volume_captions",
            "password",
            "previews",
            "files",
        ]
        read_only_fields = fields

    @extend_schema_field(serializers.ListField(child=serializers.DictField(child=serializers.CharField())))
    def get_volume_captions(self, package: Package) -> list[dict[str, str]]:
        return [{"volume": name, "caption": text} for name, text in self._caption(package).volumes]

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_password(self, package: Package) -> str | None:
        request = self.context.get("request")
        if not package.password_sealed or not (request and is_operator(request.user)):
            return None
        return selectors.package_password(package=package)


class PreviewChoiceSerializer(serializers.Serializer):
    preview = id_field(help_text="One of the package's `previews` ids.")


class PackageFilterSerializer(serializers.Serializer):
    search = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=200,
        help_text="Word prefixes, or (from 3 characters) any part of a file name, of the source caption, or of a path "
        "inside the archive.",
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
    collection = id_field(required=False, help_text="Only the packages of this collection.")

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
            collection=data.get("collection"),
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


class DownloadFileSerializer(serializers.Serializer):
    name = serializers.CharField()
    size = serializers.IntegerField()
    sha256 = serializers.CharField(help_text="What the downloaded bytes hash to.")
    url = serializers.CharField(allow_null=True, help_text="The signed link; null when the raw file is no longer kept.")
    gone_since = serializers.DateTimeField(allow_null=True, help_text="When the raw file was purged, if it was.")


class DownloadLinksSerializer(serializers.Serializer):
    url = serializers.CharField(help_text="The first kept file's link (the whole package when it is one file).")
    expires_at = serializers.DateTimeField()
    files = DownloadFileSerializer(many=True, help_text="Every raw file (each volume), in order.")


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
class PackageViewSet(ScopeAndRole, mixins.UpdateModelMixin, viewsets.ReadOnlyModelViewSet):
    http_method_names = ["get", "post", "patch", "head", "options"]

    def get_serializer_class(self):
        return PackageSerializer if self.action == "list" else PackageDetailSerializer

    def get_queryset(self):
        if self.action != "list":
            return selectors.package_search().prefetch_related("files", "previews")
        filters = PackageFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return selectors.package_search(filters=filters.filters())

    def _detail(self, package: Package) -> Response:
        """The package as it is now, with its listing and previews."""
        return Response(
            PackageDetailSerializer(self.get_queryset().get(pk=package.pk), context=self.get_serializer_context()).data
        )

    def partial_update(self, request, *args, **kwargs):
        package = self.get_object()
        data = PackageEditSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        services.package_edit(
            package=package, creator=data.validated_data.get("creator"), tags=data.validated_data.get("tags")
        )
        return self._detail(package)

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
        return self._detail(package)

    @extend_schema(
        summary="Make another of the package's images its preview",
        request=PreviewChoiceSerializer,
        responses={200: PackageDetailSerializer, 400: BAD_REQUEST},
    )
    @action(detail=True, methods=["post"])
    def preview(self, request, pk=None):
        package = self.get_object()
        data = PreviewChoiceSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        previews.package_preview_choose(package=package, preview_id=data.validated_data["preview"])
        return self._detail(package)

    @idempotent
    @extend_schema(
        summary="Send to Telegram: copy the package's destination messages to a chat or a person",
        description="Queued, then copied part by part at the account's pace; poll `/api/package-sends/{id}/`.",
        request=PackageSendInSerializer,
        responses={202: PackageSendSerializer, **ERRORS},
    )
    @action(detail=True, methods=["post"])
    def send(self, request, pk=None):
        return send_start(request, packages=[self.get_object()])

    @extend_schema(
        summary="Make signed download links to the package's raw file or volumes",
        description="Each link works without a login until `expires_at` (DOWNLOAD_LINK_SECONDS), with HTTP Range "
        "support, and names the person who made it. Operators only, and a token needs scope write; viewers (when "
        "DOWNLOAD_LINKS_FOR_VIEWERS is on) make links on the package's page.",
        request=None,
        responses={
            200: DownloadLinksSerializer,
            403: OpenApiResponse(ErrorSerializer, description="Not allowed to make download links."),
            409: OpenApiResponse(ErrorSerializer, description="None of the package's raw files is kept any more."),
        },
    )
    @action(detail=True, methods=["post"], url_path="download-link")
    def download_link(self, request, pk=None):
        try:
            links = download_links_make(package=self.get_object(), user=request.user)
        except DownloadLinkRefused as exc:
            return Response({"message": str(exc)}, status=exc.status)
        if not links.kept:
            message = "None of this package's raw files is kept any more; it is still in its destination channel."
            return Response({"message": message}, status=409)
        files = [
            {**vars(file), "url": request.build_absolute_uri(file.url) if file.url else None} for file in links.files
        ]
        data = {
            "url": next(file["url"] for file in files if file["url"]),
            "expires_at": links.expires_at,
            "files": files,
        }
        return Response(DownloadLinksSerializer(data).data)
