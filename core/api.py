"""Core API: errors as JSON with a `message` a person can act on; Idempotency-Key on POSTs that start work;
notifications; the audit trail; people."""

import functools
import json

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import transaction
from django.urls import reverse
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core import notifications, people, selectors, tokens
from core.errors import OperatorError
from core.forms import AuditFilterForm
from core.idempotency import (
    KEY_MAX_CHARS,
    idempotency_fingerprint,
    idempotent_request_answer,
    idempotent_request_claim,
)
from core.models import ApiToken, AuditChange, AuditEntry, Invite, Notification, Role
from core.outcomes import Outcome
from core.roles import IsOperator, is_operator


def _first_message(detail) -> str:
    if isinstance(detail, dict):
        for field_name, value in detail.items():
            text = _first_message(value)
            return text if field_name in {"non_field_errors", "detail"} else f"{field_name}: {text}"
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    return str(detail)


# The API's reading of errors raised below it that are not core's: registered by their owners (apps.py).
_STATUS_OF: dict[type[BaseException], int] = {}


def api_error_status_register(exc_type: type[BaseException], status_code: int) -> None:
    """Answer `exc_type` (and its subclasses) with `status_code` and its message, wherever the API meets it."""
    _STATUS_OF[exc_type] = status_code


def _registered_status(exc: BaseException) -> int | None:
    return next((_STATUS_OF[kind] for kind in type(exc).__mro__ if kind in _STATUS_OF), None)


def exception_handler(exc, context):
    """The one translation of errors into API answers: `{"message": ..., "errors": {field: [...]}}`."""
    if isinstance(exc, DjangoValidationError):
        exc = ValidationError(exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages})
    elif isinstance(exc, OperatorError):
        extra = {"errors": {exc.field: [exc.message]}} if exc.field else {}
        return error_response(exc.message, status_code=exc.status, **extra)
    elif (status_code := _registered_status(exc)) is not None:
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is None:
            return error_response(str(exc), status_code=status_code)
        response = error_response(str(exc), status_code=status_code, retry_after=retry_after)
        response["Retry-After"] = str(retry_after)
        return response
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        response.data = {"message": _first_message(response.data), "errors": response.data}
    elif isinstance(response.data, dict) and "detail" in response.data:
        response.data = {"message": str(response.data["detail"])}
    return response


def error_response(message: str, *, status_code: int = status.HTTP_400_BAD_REQUEST, **extra) -> Response:
    return Response({"message": message, **extra}, status=status_code)


# Idempotency-Key ----------------------------------------------------------------------------------------

IDEMPOTENCY_HEADER = "Idempotency-Key"
IDEMPOTENCY_KEY = OpenApiParameter(
    IDEMPOTENCY_HEADER,
    str,
    OpenApiParameter.HEADER,
    required=False,
    description="A string the client picks for this action (a UUID). A retry with the same key, by the same user "
    "on the same endpoint within 24 hours, gets the first successful answer back (header `Idempotent-Replayed: "
    "true`) and starts nothing; the same key with another body is refused (422).",
)


def idempotent(view):
    """For a POST that starts work (a ViewSet action or an APIView method): honours `Idempotency-Key`
    (core.idempotency) and says so in the OpenAPI schema. Put it above the view's @extend_schema."""

    @functools.wraps(view)
    def answer(self, request, *args, **kwargs):
        key = request.headers.get(IDEMPOTENCY_HEADER)
        if key is None:
            return view(self, request, *args, **kwargs)
        if not key.strip() or len(key) > KEY_MAX_CHARS:
            return error_response(f"{IDEMPOTENCY_HEADER} must be 1 to {KEY_MAX_CHARS} characters; a UUID fits.")
        claim = {"user": request.user, "key": key, "endpoint": f"{request.method} {request.path}"[:300]}
        fingerprint = idempotency_fingerprint(request.data)
        with transaction.atomic():
            first = idempotent_request_claim(**claim, fingerprint=fingerprint)
            if first is not None:
                if first.fingerprint != fingerprint:
                    return error_response(
                        f"This {IDEMPOTENCY_HEADER} was sent before with another body on this endpoint; "
                        "use a new key for a new request.",
                        status_code=status.HTTP_422_UNPROCESSABLE_ENTITY,
                    )
                replay = Response(first.answer, status=first.status_code)
                replay["Idempotent-Replayed"] = "true"
                return replay
            response = view(self, request, *args, **kwargs)
            body = json.loads(JSONRenderer().render(response.data)) if response.data is not None else None
            idempotent_request_answer(**claim, status_code=response.status_code, answer=body)
        return response

    # @action's and @extend_schema's settings, copied: the schema below gains the header, the view's stays
    answer.kwargs = dict(getattr(view, "kwargs", {}))
    return extend_schema(parameters=[IDEMPOTENCY_KEY])(answer)


# Notifications ------------------------------------------------------------------------------------------


class NotificationSerializer(serializers.ModelSerializer):
    is_read = serializers.BooleanField(read_only=True)

    class Meta:
        model = Notification
        fields = [
            "id",
            "type",
            "severity",
            "title",
            "message",
            "context",
            "subject",
            "url",
            "count",
            "is_read",
            "read_at",
            "resolved_at",
            "created_at",
            "last_raised_at",
        ]
        read_only_fields = fields


class NotificationsMarkedSerializer(serializers.Serializer):
    marked = serializers.IntegerField(help_text="How many notifications were unread and are now read.")


@extend_schema_view(
    list=extend_schema(
        summary="List notifications, most recently raised first",
        parameters=[OpenApiParameter("unread", bool, description="1: only unread notifications")],
    ),
    retrieve=extend_schema(summary="One notification"),
)
class NotificationViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = NotificationSerializer
    queryset = Notification.objects.all()

    def get_queryset(self):
        if self.action == "list":
            unread = self.request.query_params.get("unread", "").lower() in {"1", "true", "yes"}
            return selectors.notification_list(unread_only=unread)
        return Notification.objects.all()

    @extend_schema(summary="Mark a notification read", request=None, responses=NotificationSerializer)
    @action(detail=True, methods=["post"])
    def read(self, request, pk=None):
        notification = notifications.notification_mark_read(notification=self.get_object())
        return Response(NotificationSerializer(notification).data)

    @extend_schema(summary="Mark every notification read", request=None, responses=NotificationsMarkedSerializer)
    @action(detail=False, methods=["post"], url_path="read-all")
    def read_all(self, request):
        return Response({"marked": notifications.notifications_mark_all_read()})


class AuditChangeSerializer(serializers.ModelSerializer):
    class Meta:
        model = AuditChange
        fields = ["kind", "object_id", "object_repr", "operation", "fields"]
        read_only_fields = fields


class AuditEntrySerializer(serializers.ModelSerializer):
    changes = AuditChangeSerializer(many=True, read_only=True)
    address = serializers.SerializerMethodField(help_text="Where it came from; shown to operators only.")

    class Meta:
        model = AuditEntry
        fields = ["id", "at", "actor", "via", "action", "path", "status_code", "address", "changes", "changes_left_out"]
        read_only_fields = fields

    def get_address(self, entry) -> str | None:
        return entry.address if is_operator(self.context["request"].user) else None


@extend_schema_view(
    list=extend_schema(
        summary="The audit trail, newest first",
        parameters=[
            OpenApiParameter("actor", str, description="The person's login, or part of a token's name"),
            OpenApiParameter("kind", str, description='What kind of row it changed: "reminders.ReminderRun"'),
            OpenApiParameter("object_id", str, description="Which row (with kind)"),
            OpenApiParameter("since", str, description="ISO 8601 time: from"),
            OpenApiParameter("until", str, description="ISO 8601 time: before"),
        ],
    ),
    retrieve=extend_schema(summary="One audit entry"),
)
class AuditEntryViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    serializer_class = AuditEntrySerializer
    queryset = AuditEntry.objects.prefetch_related("changes")

    def get_queryset(self):
        if self.action != "list":
            return self.queryset
        form = AuditFilterForm(self.request.query_params)
        if not form.is_valid():
            raise ValidationError({name: " ".join(errors) for name, errors in form.errors.items()})
        return selectors.audit_entries(**{name: value for name, value in form.cleaned_data.items() if value})


# API tokens -------------------------------------------------------------------------------------------------


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
class ApiTokenViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Each person manages their own; viewers may make read tokens only (so no IsOperatorOrReadOnly here)."""

    serializer_class = ApiTokenSerializer
    queryset = ApiToken.objects.all()  # the schema's; requests get get_queryset's
    permission_classes = [IsAuthenticated, tokens.TokenScopeAllows]

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


class ErrorSerializer(serializers.Serializer):
    """Every API error: one "Error" component in the schema."""

    message = serializers.CharField(help_text="What went wrong and what to do about it.")
    retry_after = serializers.IntegerField(required=False, help_text="Seconds Telegram asks to wait (429 only).")


class OutcomeFields(serializers.Serializer):
    """What a run came to (core.outcomes), beside its `status`: the same words for every kind of run."""

    outcome = serializers.ChoiceField(
        source="outcome.key",
        choices=Outcome.choices,
        read_only=True,
        help_text="What the run came to: waiting, running, paused, success, partial (some of its own work failed), "
        "failed, canceled (ended by an operator), or idle (did nothing; outcome_text says why).",
    )
    outcome_text = serializers.CharField(
        source="outcome.text", read_only=True, help_text="The outcome in words, as the pages say it."
    )


# People (core/people.py): operators only, reading too ------------------------------------------------------

PEOPLE_REFUSED = {
    400: OpenApiResponse(ErrorSerializer, description="Invalid input; `message` names the field and what to change."),
    403: OpenApiResponse(ErrorSerializer, description="Only operators manage people."),
    404: OpenApiResponse(ErrorSerializer, description="No such login or link."),
    409: OpenApiResponse(
        ErrorSerializer, description="Refused in the current state: the last active operator, a deactivated login."
    ),
}


class PersonSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="pk", read_only=True)
    username = serializers.CharField(read_only=True)
    role = serializers.ChoiceField(choices=Role.choices, read_only=True)
    is_active = serializers.BooleanField(read_only=True)
    last_login = serializers.DateTimeField(read_only=True, allow_null=True)
    added_by = serializers.CharField(read_only=True, allow_null=True, help_text="Who added the login, if known.")
    added_how = serializers.CharField(
        read_only=True, allow_null=True, help_text="invite, password or command; null if made elsewhere."
    )


class PersonAddSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=Role.choices)


class PersonAddedSerializer(PersonSerializer):
    password = serializers.CharField(read_only=True, help_text="Shown this once; only its hash is kept.")


class RoleSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)


class PasswordResetSerializer(serializers.Serializer):
    how = serializers.ChoiceField(
        choices=[("password", "A new password, shown once"), ("link", "A link to choose one")], default="password"
    )
    expires_in_days = serializers.IntegerField(min_value=1, max_value=people.INVITE_DAYS_MAX, default=1)


class PasswordResetAnswerSerializer(serializers.Serializer):
    password = serializers.CharField(required=False, help_text="how=password: the new password, shown this once.")
    link = serializers.CharField(required=False, help_text="how=link: the link, shown this once.")
    expires_at = serializers.DateTimeField(required=False)


class InviteSerializer(serializers.ModelSerializer):
    for_login = serializers.CharField(source="login.username", read_only=True, allow_null=True, default=None)
    created_by = serializers.CharField(source="created_by.username", read_only=True, allow_null=True, default=None)

    class Meta:
        model = Invite
        fields = ["id", "purpose", "role", "username", "for_login", "created_by", "created_at", "expires_at"]
        read_only_fields = fields


class InviteCreateSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Role.choices)
    username = serializers.CharField(
        max_length=150, required=False, allow_blank=True, default="", help_text="Empty: the person chooses."
    )
    expires_in_days = serializers.IntegerField(min_value=1, max_value=people.INVITE_DAYS_MAX, default=7)


class InviteCreatedSerializer(InviteSerializer):
    link = serializers.CharField(read_only=True, help_text="Shown this once; only its hash is kept.")

    class Meta(InviteSerializer.Meta):
        fields = [*InviteSerializer.Meta.fields, "link"]
        read_only_fields = fields


def _link(request, token: str) -> str:
    return request.build_absolute_uri(reverse("invite", args=[token]))


@extend_schema_view(
    list=extend_schema(
        summary="Every login, operators first", responses={200: PersonSerializer(many=True), **PEOPLE_REFUSED}
    ),
    retrieve=extend_schema(summary="One login", responses={200: PersonSerializer, **PEOPLE_REFUSED}),
)
class PersonViewSet(viewsets.GenericViewSet):
    permission_classes = [IsOperator]
    serializer_class = PersonSerializer
    queryset = get_user_model().objects.all()
    pagination_class = None  # a team's logins: one page

    def _login(self, pk):
        login = get_user_model().objects.filter(pk=pk).first() if str(pk).isdigit() else None
        if login is None:
            raise NotFound("No login with this id; GET /api/people/ lists them.")
        return login

    def list(self, request):
        return Response(PersonSerializer(people.people_list(), many=True).data)

    def retrieve(self, request, pk=None):
        return Response(PersonSerializer(people.person_of(login=self._login(pk))).data)

    @extend_schema(
        summary="Add a login with a password (shown once)",
        request=PersonAddSerializer,
        responses={201: PersonAddedSerializer, **PEOPLE_REFUSED},
    )
    def create(self, request):
        data = PersonAddSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        login, password = people.login_add(**data.validated_data, added_by=request.user)
        answer = {**PersonSerializer(people.person_of(login=login)).data, "password": password}
        return Response(answer, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Change a role", request=RoleSerializer, responses={200: PersonSerializer, **PEOPLE_REFUSED})
    @action(detail=True, methods=["post"])
    def role(self, request, pk=None):
        data = RoleSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        login = people.login_role_change(login=self._login(pk), role=data.validated_data["role"], by=request.user)
        return Response(PersonSerializer(people.person_of(login=login)).data)

    @extend_schema(
        summary="Deactivate a login (its sessions end now)",
        request=None,
        responses={200: PersonSerializer, **PEOPLE_REFUSED},
    )
    @action(detail=True, methods=["post"])
    def deactivate(self, request, pk=None):
        login = people.login_deactivate(login=self._login(pk), by=request.user)
        return Response(PersonSerializer(people.person_of(login=login)).data)

    @extend_schema(summary="Reactivate a login", request=None, responses={200: PersonSerializer, **PEOPLE_REFUSED})
    @action(detail=True, methods=["post"])
    def reactivate(self, request, pk=None):
        login = people.login_reactivate(login=self._login(pk))
        return Response(PersonSerializer(people.person_of(login=login)).data)

    @extend_schema(
        summary="Reset a login's password: a new one shown once, or a link to choose one",
        request=PasswordResetSerializer,
        responses={200: PasswordResetAnswerSerializer, **PEOPLE_REFUSED},
    )
    @action(detail=True, methods=["post"])
    def password(self, request, pk=None):
        data = PasswordResetSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        login = self._login(pk)
        if data.validated_data["how"] == "link":
            invite, token = people.invite_for_password(
                login=login, created_by=request.user, expires_in_days=data.validated_data["expires_in_days"]
            )
            return Response({"link": _link(request, token), "expires_at": invite.expires_at})
        return Response({"password": people.login_password_reset(login=login)})


@extend_schema_view(
    list=extend_schema(
        summary="Invite and password links not used, withdrawn nor expired",
        responses={200: InviteSerializer(many=True), **PEOPLE_REFUSED},
    ),
)
class InviteViewSet(viewsets.GenericViewSet):
    permission_classes = [IsOperator]
    serializer_class = InviteSerializer
    queryset = Invite.objects.all()
    pagination_class = None

    def list(self, request):
        return Response(InviteSerializer(people.invites_pending(), many=True).data)

    @extend_schema(
        summary="Make an invite link for a new login (shown once)",
        request=InviteCreateSerializer,
        responses={201: InviteCreatedSerializer, **PEOPLE_REFUSED},
    )
    def create(self, request):
        data = InviteCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        invite, token = people.invite_create(**data.validated_data, created_by=request.user)
        answer = {**InviteSerializer(invite).data, "link": _link(request, token)}
        return Response(answer, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Withdraw a link", request=None, responses={200: InviteSerializer, **PEOPLE_REFUSED})
    @action(detail=True, methods=["post"])
    def revoke(self, request, pk=None):
        invite = people.invite_revoke(invite=self.get_object())
        return Response(InviteSerializer(invite).data)
