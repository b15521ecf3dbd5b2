"""API for audiences: saved lists of an account's groups, by filters (with a preview of who matches) or a CSV."""

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response

from accounts.models import Chat, TelegramAccount
from core.access import ScopeAndRole
from core.api import ErrorSerializer, error_response
from reminders import selectors, services
from reminders.models import Audience, AudienceMember
from reminders.services import AudienceError, AudienceFilter
from reminders.services.audiences import AUDIENCE_CHAT_TYPES, CSV_MAX_BYTES

ERRORS = {
    400: OpenApiResponse(ErrorSerializer, description="Invalid input; `message` says what, `problems` each one."),
    409: OpenApiResponse(ErrorSerializer, description="In use: `message` names the reminders."),
}


class FiltersSerializer(serializers.Serializer):
    title_contains = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    min_members = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0)
    max_members = serializers.IntegerField(required=False, allow_null=True, default=None, min_value=0)
    chat_type = serializers.ChoiceField(
        choices=["", *AUDIENCE_CHAT_TYPES], required=False, default="", help_text="Blank for both."
    )
    forum = serializers.BooleanField(required=False, allow_null=True, default=None, help_text="Null for both.")

    def filters(self) -> AudienceFilter:
        return AudienceFilter(**self.validated_data)


class MatchSerializer(serializers.ModelSerializer):
    chat = serializers.IntegerField(source="telegram_id", help_text="Telegram chat id.")
    forum = serializers.BooleanField(source="is_forum")

    class Meta:
        model = Chat
        fields = ["chat", "title", "type", "forum", "members_count"]
        read_only_fields = fields


class MemberSerializer(serializers.ModelSerializer):
    chat = serializers.IntegerField(source="chat.telegram_id", help_text="Telegram chat id.")
    title = serializers.CharField(source="chat.title")
    topic = serializers.IntegerField(source="topic_id", allow_null=True, help_text="Forum topic id; null = General.")

    class Meta:
        model = AudienceMember
        fields = ["chat", "title", "topic"]
        read_only_fields = fields


class AudienceSerializer(serializers.ModelSerializer):
    filters = serializers.SerializerMethodField()
    members = MemberSerializer(many=True, read_only=True)
    reminders = serializers.SerializerMethodField()

    class Meta:
        model = Audience
        fields = ["id", "account", "name", "kind", "filters", "members", "reminders", "created_at", "updated_at"]
        read_only_fields = fields

    def get_filters(self, audience: Audience) -> dict | None:
        if audience.kind != "filter":
            return None
        return FiltersSerializer(services.audience_filter_of(audience)).data

    def get_reminders(self, audience: Audience) -> list[str]:
        return [link.reminder.name for link in audience.reminder_links.all()]


class AudienceWriteSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(
        queryset=TelegramAccount.objects.all(), help_text="The account whose groups it lists."
    )
    name = serializers.CharField(max_length=200)
    filters = FiltersSerializer(help_text="Its members are the account's groups these match now.")


class PreviewInSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(queryset=TelegramAccount.objects.all())
    filters = FiltersSerializer()


class PreviewSerializer(serializers.Serializer):
    count = serializers.IntegerField()
    groups = MatchSerializer(many=True, help_text="The first 100, by title.")


class ImportInSerializer(serializers.Serializer):
    account = serializers.PrimaryKeyRelatedField(queryset=TelegramAccount.objects.all())
    name = serializers.CharField(max_length=200)
    file = serializers.FileField(
        required=False, help_text="CSV: a chat id, @username or t.me link a line, then optionally a topic id."
    )
    csv = serializers.CharField(required=False, help_text="The same, as text (instead of `file`).")

    def validate(self, attrs):
        upload = attrs.pop("file", None)
        if upload is not None:
            if upload.size > CSV_MAX_BYTES:
                raise serializers.ValidationError({"file": f"at most {CSV_MAX_BYTES:,} bytes."})
            try:
                attrs["csv"] = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                raise serializers.ValidationError({"file": "not UTF-8 text; save the CSV as UTF-8."}) from None
        if not attrs.get("csv"):
            raise serializers.ValidationError({"file": "give a CSV `file`, or its text as `csv`."})
        return attrs


def _refused(exc: AudienceError, status_code: int = status.HTTP_400_BAD_REQUEST) -> Response:
    return error_response(str(exc), status_code=status_code, problems=exc.problems)


@extend_schema_view(
    list=extend_schema(summary="List audiences"),
    retrieve=extend_schema(summary="One audience with its groups and the reminders that target it"),
)
class AudienceViewSet(
    ScopeAndRole, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet
):
    serializer_class = AudienceSerializer
    parser_classes = [JSONParser, MultiPartParser, FormParser]

    def get_queryset(self):
        return selectors.audience_list()

    def _response(self, audience: Audience, status_code=status.HTTP_200_OK) -> Response:
        return Response(AudienceSerializer(selectors.audience_list().get(pk=audience.pk)).data, status=status_code)

    @extend_schema(
        summary="Create an audience by filters",
        request=AudienceWriteSerializer,
        responses={201: AudienceSerializer, 400: ERRORS[400]},
    )
    def create(self, request):
        data = AudienceWriteSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        filters = AudienceFilter(**values["filters"])
        try:
            audience = services.audience_save(account=values["account"], name=values["name"], filters=filters)
        except AudienceError as exc:
            return _refused(exc)
        return self._response(audience, status.HTTP_201_CREATED)

    @extend_schema(
        summary="Change an audience's name and filters; its groups are built again from them",
        request=AudienceWriteSerializer,
        responses={200: AudienceSerializer, 400: ERRORS[400]},
    )
    def update(self, request, pk=None):
        audience = self.get_object()
        data = AudienceWriteSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            audience = services.audience_save(
                account=values["account"],
                name=values["name"],
                filters=AudienceFilter(**values["filters"]),
                audience=audience,
            )
        except AudienceError as exc:
            return _refused(exc)
        return self._response(audience)

    @extend_schema(
        summary="Delete an audience no reminder targets",
        responses={204: None, 409: ERRORS[409]},
    )
    def destroy(self, request, pk=None):
        try:
            services.audience_delete(audience=self.get_object())
        except AudienceError as exc:
            return _refused(exc, status.HTTP_409_CONFLICT)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(
        summary="Which of the account's groups these filters match (how many, and the first 100)",
        request=PreviewInSerializer,
        responses={200: PreviewSerializer, 400: ERRORS[400]},
    )
    @action(detail=False, methods=["post"])
    def preview(self, request):
        data = PreviewInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        filters = AudienceFilter(**data.validated_data["filters"])
        if filters.problems():
            return _refused(AudienceError(filters.problems()))
        matches = services.audience_matches(account=data.validated_data["account"], filters=filters)
        return Response({"count": matches.count(), "groups": MatchSerializer(matches[:100], many=True).data})

    @extend_schema(
        summary="Create an audience from a CSV (`file`, multipart, or `csv` as text)",
        description="One group a line: a chat id (Telegram's, or the Bot API's -100…), an @username or a t.me "
        "link, then optionally a topic id. Lines naming none of the account's groups are listed by number "
        "(`problems`), and then nothing is imported.",
        request={"multipart/form-data": ImportInSerializer, "application/json": ImportInSerializer},
        responses={201: AudienceSerializer, 400: ERRORS[400]},
    )
    @action(detail=False, methods=["post"], url_path="import")
    def import_csv(self, request):
        data = ImportInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            audience = services.audience_import(account=values["account"], name=values["name"], text=values["csv"])
        except AudienceError as exc:
            return _refused(exc)
        return self._response(audience, status.HTTP_201_CREATED)
