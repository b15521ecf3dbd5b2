"""API tokens in the API (core/tokens.py): each person makes, lists and revokes their own; an operator sees
everyone's. The schema's name for the token header lives here too."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from core import tokens
from core.access import LOGGED_IN, ScopeAndRole
from core.models import ApiToken


class ApiTokenScheme(OpenApiAuthenticationExtension):
    """How the schema (and Swagger UI's Authorize button) names core.tokens' header."""

    target_class = "core.tokens.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "`Token <secret>`: a named token from the Tokens page, `POST /api/tokens/` or "
            "`POST /api/auth/token/`. A read token may only look.",
        }


class ApiTokenSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.get_username", read_only=True)
    status = serializers.SerializerMethodField(help_text="usable, expired or revoked")

    class Meta:
        model = ApiToken
        fields = ["id", "name", "owner", "scope", "prefix", "created_at", "expires_at", "last_used_at", "revoked_at"]
        fields += ["status"]
        read_only_fields = fields

    def get_status(self, token) -> str:
        return "revoked" if token.revoked_at else "expired" if token.expired else "usable"


class ApiTokenCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100, help_text="What uses it: backup script")
    scope = serializers.ChoiceField(choices=ApiToken.Scope.choices, default=ApiToken.Scope.READ)
    days = serializers.IntegerField(required=False, help_text="How long it lasts (API_TOKEN_DEFAULT_DAYS by default)")


class ApiTokenMadeSerializer(ApiTokenSerializer):
    secret = serializers.CharField(read_only=True, help_text="Shown this once: keep it now, it cannot be read again.")

    class Meta(ApiTokenSerializer.Meta):
        fields = [*ApiTokenSerializer.Meta.fields, "secret"]
        read_only_fields = fields


@extend_schema_view(
    list=extend_schema(summary="API tokens: your own, or everyone's for an operator"),
    retrieve=extend_schema(summary="One API token (never its secret)"),
)
class ApiTokenViewSet(ScopeAndRole, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Each person manages their own; viewers may make read tokens only (so changes by anyone logged in)."""

    serializer_class = ApiTokenSerializer
    queryset = ApiToken.objects.all()  # the schema's; requests get get_queryset's
    changes_by = LOGGED_IN

    def get_queryset(self):
        return tokens.api_tokens_visible(user=self.request.user)

    @extend_schema(
        summary="Make a token; its secret is in this answer only",
        request=ApiTokenCreateSerializer,
        responses={201: ApiTokenMadeSerializer},
    )
    def create(self, request):
        given = ApiTokenCreateSerializer(data=request.data)
        given.is_valid(raise_exception=True)
        token, secret = tokens.api_token_create(owner=request.user, **given.validated_data)
        token.secret = secret
        return Response(ApiTokenMadeSerializer(token).data, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Revoke a token: it stops working at once", request=None, responses=ApiTokenSerializer)
    @action(detail=True, methods=["post"])
    def revoke(self, request, pk=None):
        return Response(ApiTokenSerializer(tokens.api_token_revoke(token=self.get_object())).data)
