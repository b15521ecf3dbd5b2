"""API for Telegram accounts: list, add, log in (send code, then code or 2FA password), refresh chats, delete."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts import selectors, services
from accounts.models import AuthState, TelegramAccount
from core.api import ErrorSerializer


class AccountSerializer(serializers.ModelSerializer):
    """A Telegram account; its session and login code hash never leave the server."""

    auth_state_label = serializers.CharField(source="get_auth_state_display", read_only=True)
    chats_known = serializers.IntegerField(read_only=True, help_text="Chats stored by the last refresh.")

    class Meta:
        model = TelegramAccount
        fields = [
            "id",
            "phone",
            "display_name",
            "username",
            "telegram_user_id",
            "auth_state",
            "auth_state_label",
            "is_premium",
            "upload_limit_bytes",
            "is_active",
            "last_seen_at",
            "last_error",
            "chats_known",
            "chats_refreshed_at",
            "created_at",
        ]
        read_only_fields = fields


class AccountCreateSerializer(serializers.Serializer):
    phone = serializers.CharField(max_length=32, help_text="International format, e.g. +15550000001.")


class AccountFilterSerializer(serializers.Serializer):
    auth_state = serializers.ChoiceField(choices=AuthState.choices, required=False)
    is_premium = serializers.BooleanField(required=False, allow_null=True, default=None)


class SignInSerializer(serializers.Serializer):
    code = serializers.CharField(required=False, allow_blank=True, help_text="The login code Telegram sent.")
    password = serializers.CharField(
        required=False,
        allow_blank=True,
        trim_whitespace=False,
        style={"input_type": "password"},
        help_text="The two-step verification password, when the account asked for it. Never stored.",
    )

    def validate(self, attrs):
        if bool(attrs.get("code", "").strip()) == bool(attrs.get("password", "")):
            raise ValidationError("Send either the login code or the two-step verification password.")
        return attrs


ERRORS = {
    400: OpenApiResponse(ErrorSerializer, description="Wrong code, password or phone number."),
    409: OpenApiResponse(ErrorSerializer, description="The login step does not fit the account's state."),
    429: OpenApiResponse(ErrorSerializer, description="Telegram asks to wait (FloodWait); see retry_after."),
}


@method_decorator(sensitive_post_parameters("password", "code"), name="dispatch")
@extend_schema_view(
    list=extend_schema(summary="List Telegram accounts", parameters=[AccountFilterSerializer]),
    retrieve=extend_schema(summary="One Telegram account"),
    destroy=extend_schema(
        summary="Delete an account with its session and chat list",
        description="An account with history (reminders, reminder runs, ingestion runs) cannot be deleted: "
        "409, switch it off with `deactivate` instead.",
        responses={204: None, 409: ERRORS[409]},
    ),
)
class AccountViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet
):
    serializer_class = AccountSerializer

    def get_queryset(self):
        if self.action != "list":
            return selectors.account_list()
        filters = AccountFilterSerializer(data=self.request.query_params)
        filters.is_valid(raise_exception=True)
        return selectors.account_list(**filters.validated_data)

    def _account_response(self, account: TelegramAccount, *, status_code: int = status.HTTP_200_OK) -> Response:
        return Response(AccountSerializer(selectors.account_get(pk=account.pk)).data, status=status_code)

    @extend_schema(
        summary="Add an account (then send-code to log it in)",
        request=AccountCreateSerializer,
        responses={201: AccountSerializer, 400: ERRORS[400]},
    )
    def create(self, request):
        data = AccountCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            account = services.account_create(phone=data.validated_data["phone"])
        except DjangoValidationError as exc:
            raise ValidationError({"phone": exc.messages}) from None
        return self._account_response(account, status_code=status.HTTP_201_CREATED)

    def perform_destroy(self, instance):
        services.account_delete(account=instance)

    @extend_schema(
        summary="Switch an account off: it neither ingests nor sends; its history stays",
        request=None,
        responses=AccountSerializer,
    )
    @action(detail=True, methods=["post"])
    def deactivate(self, request, pk=None):
        return self._account_response(services.account_set_active(account=self.get_object(), active=False))

    @extend_schema(summary="Switch an account back on", request=None, responses=AccountSerializer)
    @action(detail=True, methods=["post"])
    def activate(self, request, pk=None):
        return self._account_response(services.account_set_active(account=self.get_object(), active=True))

    @extend_schema(
        summary="Ask Telegram to send a login code",
        request=None,
        responses={200: AccountSerializer, **ERRORS},
    )
    @action(detail=True, methods=["post"], url_path="send-code")
    def send_code(self, request, pk=None):
        return self._account_response(services.account_send_code(account=self.get_object()))

    @extend_schema(
        summary="Log in with the code, or with the 2FA password",
        description=(
            "Send `code` after send-code. When the account has two-step verification, the answer has "
            "`auth_state` = `awaiting_password`: send `password` next."
        ),
        request=SignInSerializer,
        responses={200: AccountSerializer, **ERRORS},
    )
    @action(detail=True, methods=["post"], url_path="sign-in")
    @method_decorator(sensitive_variables("data"))  # the serializer's repr holds the password
    def sign_in(self, request, pk=None):
        data = SignInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        account = services.account_sign_in(
            account=self.get_object(),
            code=data.validated_data.get("code", ""),
            password=data.validated_data.get("password", ""),
        )
        return self._account_response(account)

    @extend_schema(
        summary="Store the channels and groups the account is in",
        request=None,
        responses={200: AccountSerializer, 409: ERRORS[409], 429: ERRORS[429]},
    )
    @action(detail=True, methods=["post"], url_path="refresh-chats")
    def refresh_chats(self, request, pk=None):
        account = self.get_object()
        services.account_refresh_chats(account=account)
        return self._account_response(account)
