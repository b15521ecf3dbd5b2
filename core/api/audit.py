"""The audit trail in the API: who changed what, newest first; where from for operators only."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, viewsets
from rest_framework.exceptions import ValidationError

from core import selectors
from core.access import ScopeAndRole
from core.audit_words import kind_words
from core.forms import AuditFilterForm
from core.models import AuditChange, AuditEntry
from core.roles import is_operator


class AuditChangeSerializer(serializers.ModelSerializer):
    kind_name = serializers.SerializerMethodField(help_text='The kind in words: "reminder run".')

    class Meta:
        model = AuditChange
        fields = ["kind", "kind_name", "object_id", "object_repr", "operation", "fields"]
        read_only_fields = fields

    def get_kind_name(self, change) -> str:
        return kind_words(change.kind)


class AuditEntrySerializer(serializers.ModelSerializer):
    summary = serializers.CharField(
        read_only=True, help_text='The action in words: "vera cancelled Flash sale run #12". `action` stays the route.'
    )
    path = serializers.CharField(
        read_only=True, help_text='The route, never the path sent (it may hold a secret): "/invite/:token/".'
    )
    changes = AuditChangeSerializer(many=True, read_only=True)
    address = serializers.SerializerMethodField(help_text="Where it came from; shown to operators only.")

    class Meta:
        model = AuditEntry
        fields = [
            "id",
            "at",
            "actor",
            "via",
            "action",
            "summary",
            "path",
            "status_code",
            "address",
            "changes",
            "changes_left_out",
        ]
        read_only_fields = fields

    def get_address(self, entry) -> str | None:
        return entry.address if is_operator(self.context["request"].user) else None


@extend_schema_view(
    list=extend_schema(
        summary="The audit trail, newest first",
        parameters=[
            OpenApiParameter(
                "actor",
                str,
                description="A person's login (their entries and their tokens'), or part of a token's name",
            ),
            OpenApiParameter(
                "kind", str, description='What kind of row it changed: "reminders.ReminderRun", or "reminder run"'
            ),
            OpenApiParameter("object_id", str, description="Which row (with kind)"),
            OpenApiParameter("since", str, description="ISO 8601 time: from"),
            OpenApiParameter("until", str, description="ISO 8601 time: before"),
        ],
    ),
    retrieve=extend_schema(summary="One audit entry"),
)
class AuditEntryViewSet(ScopeAndRole, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = AuditEntrySerializer
    queryset = AuditEntry.objects.prefetch_related("changes")

    def get_queryset(self):
        if self.action != "list":
            return self.queryset
        form = AuditFilterForm(self.request.query_params)
        if not form.is_valid():
            raise ValidationError({name: " ".join(errors) for name, errors in form.errors.items()})
        return selectors.audit_entries(**{name: value for name, value in form.cleaned_data.items() if value})
