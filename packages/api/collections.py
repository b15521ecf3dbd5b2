"""Collections: the list and each one, create one of chosen packages, rename, merge into another, dissolve, and
a send of every package of one to Telegram."""

from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from core.access import ScopeAndRole
from core.api import idempotent
from packages import grouping, selectors
from packages.api.sends import PackageSendInSerializer, PackageSendSerializer, send_start
from packages.api.shared import BAD_REQUEST, ERRORS, id_field, preview_url
from packages.models import Collection


class CollectionSerializer(serializers.ModelSerializer):
    package_count = serializers.IntegerField(read_only=True)
    source_topic_id = serializers.IntegerField(read_only=True, allow_null=True)
    preview_url = serializers.SerializerMethodField(help_text="The first package's preview, or null.")

    class Meta:
        model = Collection
        fields = ["id", "name", "rule", "source_chat", "source_topic_id", "package_count", "preview_url", "created_at"]
        read_only_fields = ["id", "rule", "source_chat", "created_at"]
        extra_kwargs = {"rule": {"help_text": "The rule that made it; 'operator' once an operator merged into it."}}

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_preview_url(self, collection: Collection) -> str | None:
        return preview_url(collection.preview_package_id, collection.preview_id)


class CollectionCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=255, help_text="What to call it.")
    packages = serializers.ListField(
        child=id_field(), min_length=1, max_length=10_000, help_text="The ids of its packages."
    )


class CollectionRenameSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=255)


class CollectionMergeSerializer(serializers.Serializer):
    into = id_field(help_text="The collection that takes this one's packages.")


class DissolveResultSerializer(serializers.Serializer):
    message = serializers.CharField()
    packages = serializers.IntegerField(help_text="How many packages now stand alone.")


@extend_schema_view(
    list=extend_schema(summary="List collections, newest first"),
    retrieve=extend_schema(summary="One collection; its packages: /api/packages/?collection=ID"),
)
class CollectionViewSet(ScopeAndRole, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = CollectionSerializer

    def get_queryset(self):
        return selectors.collection_list()

    def _answer(self, collection: Collection, code: int = status.HTTP_200_OK) -> Response:
        return Response(CollectionSerializer(selectors.collection_get(pk=collection.pk)).data, status=code)

    @extend_schema(
        summary="Create a collection of chosen packages (they leave the ones they were in)",
        request=CollectionCreateSerializer,
        responses={201: CollectionSerializer, 400: BAD_REQUEST},
    )
    def create(self, request):
        data = CollectionCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        collection = grouping.collection_create(
            name=data.validated_data["name"], package_ids=data.validated_data["packages"]
        )
        return self._answer(collection, status.HTTP_201_CREATED)

    @extend_schema(
        summary="Rename a collection",
        request=CollectionRenameSerializer,
        responses={200: CollectionSerializer, 400: BAD_REQUEST},
    )
    def partial_update(self, request, pk=None):
        data = CollectionRenameSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        return self._answer(grouping.collection_rename(collection=self.get_object(), name=data.validated_data["name"]))

    @extend_schema(
        summary="Merge this collection into another; its packages keep the rule that grouped them",
        request=CollectionMergeSerializer,
        responses={200: CollectionSerializer, 400: BAD_REQUEST},
    )
    @action(detail=True, methods=["post"])
    def merge(self, request, pk=None):
        data = CollectionMergeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        into = grouping.collection_merge(collection=self.get_object(), into_id=data.validated_data["into"])
        return self._answer(into)

    @extend_schema(
        summary="Dissolve a collection: its packages stand alone and are not grouped again automatically",
        request=None,
        responses={200: DissolveResultSerializer},
    )
    @action(detail=True, methods=["post"])
    def dissolve(self, request, pk=None):
        collection = self.get_object()
        name = collection.name
        count = grouping.collection_dissolve(collection=collection)
        message = f"{name} is dissolved; its {count} package{'s' if count != 1 else ''} stand alone."
        return Response(DissolveResultSerializer({"message": message, "packages": count}).data)

    @idempotent
    @extend_schema(
        summary="Send to Telegram: copy every package of the collection, in order, to a chat or a person (one send)",
        description="Queued, then copied part by part at the account's pace; poll `/api/package-sends/{id}/`.",
        request=PackageSendInSerializer,
        responses={202: PackageSendSerializer, **ERRORS},
    )
    @action(detail=True, methods=["post"])
    def send(self, request, pk=None):
        collection = self.get_object()
        packages = selectors.collection_packages(collection=collection)
        return send_start(request, packages=packages, collection=collection)
