"""API for Telegram accounts: list, add, log in (send code, then code or 2FA password), refresh chats, delete."""

from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.decorators import method_decorator
from django.views.decorators.debug import sensitive_post_parameters, sensitive_variables
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field, extend_schema_view
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from accounts import ingest_limits, pace, selectors, services
from accounts.models import AccountRest, AuthState, TelegramAccount
from core.access import ScopeAndRole
from core.api import ErrorSerializer


class AccountRestSerializer(serializers.ModelSerializer):
    class Meta:
        model = AccountRest
        fields = ["started_at", "until", "reason", "ended_at", "ended_by"]
        read_only_fields = fields


class AccountHealthSerializer(serializers.Serializer):
    """How the account fares with Telegram when sending."""

    verdict = serializers.ChoiceField(choices=list(selectors.VERDICTS.items()))
    verdict_label = serializers.CharField()
    sends_last_hour = serializers.IntegerField()
    sends_last_day = serializers.IntegerField()
    flood_waits_last_day = serializers.IntegerField(help_text="FloodWaits in the last 24 hours.")
    flood_wait_seconds_last_day = serializers.IntegerField(help_text="The seconds those FloodWaits asked for.")
    budget_per_minute = serializers.FloatField(help_text="The send pace now, in the shared bucket.")
    ceiling_per_minute = serializers.IntegerField(help_text="REMINDER_MAX_SEND_PER_MINUTE: the pace never goes above.")
    budget_reason = serializers.CharField(help_text="Why the pace last changed.")
    budget_changed_at = serializers.DateTimeField(allow_null=True)
    restriction = serializers.CharField(help_text="Telegram's restriction or the login problem; empty when none.")
    resting_until = serializers.DateTimeField(allow_null=True, help_text="Quarantine: nothing is sent or ingested.")
    rest_reason = serializers.CharField()
    rest_resumes_runs = serializers.BooleanField(help_text="Runs paused by the rest resume by themselves after it.")
    sending_stopped = serializers.BooleanField(help_text="The operator stopped all sending for this account.")
    rests = AccountRestSerializer(many=True, help_text="The last rests, newest first.")


class AccountSerializer(serializers.ModelSerializer):
    """A Telegram account; its session and login code hash never leave the server."""

    auth_state_label = serializers.CharField(source="get_auth_state_display", read_only=True)
    chats_known = serializers.IntegerField(
        read_only=True,
        help_text="Channels and groups stored by the last refresh (people with a private chat not counted).",
    )
    health = serializers.SerializerMethodField()
    ingest_hours = serializers.SerializerMethodField(help_text='When it may transfer: "09:00–18:00 (Europe/Berlin)".')
    ingest_bandwidth = serializers.SerializerMethodField(help_text='Its bandwidth cap: "2 MB/s", or "no cap".')
    ingest_waiting = serializers.SerializerMethodField(help_text="Why ingestion waits now (its hours); empty if not.")

    def get_ingest_hours(self, account: TelegramAccount) -> str:
        return ingest_limits.account_ingest_hours_text(account=account)

    def get_ingest_bandwidth(self, account: TelegramAccount) -> str:
        return ingest_limits.account_bandwidth_text(account=account)

    def get_ingest_waiting(self, account: TelegramAccount) -> str:
        return ingest_limits.account_ingest_wait(account=account)

    @extend_schema_field(AccountHealthSerializer)
    def get_health(self, account: TelegramAccount) -> dict:
        health = getattr(account, "health", None) or selectors.account_health(account=account)
        return AccountHealthSerializer(health).data

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
            "health",
            "ingest_start_hour",
            "ingest_end_hour",
            "ingest_timezone",
            "ingest_bytes_per_second",
            "ingest_hours",
            "ingest_bandwidth",
            "ingest_waiting",
        ]
        read_only_fields = fields


class IngestLimitsSerializer(serializers.Serializer):
    ingest_start_hour = serializers.IntegerField(
        help_text="The hour (0–23, wall clock of ingest_timezone) ingestion may start transferring; 0 with 24 is "
        "all day, a start after the end runs overnight (22 → 6)."
    )
    ingest_end_hour = serializers.IntegerField(help_text="The hour (1–24) it stops transferring.")
    ingest_timezone = serializers.CharField(help_text="An IANA zone, e.g. Europe/Berlin or UTC.")
    ingest_bandwidth = serializers.CharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        help_text='Bytes a second shared by every download and upload of the account: "2 MB/s", "500 KB/s", '
        '"1.5 MiB/s" or a number; empty or null for no cap.',
    )


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
    ScopeAndRole, mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin, viewsets.GenericViewSet
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
        summary="Stop all sending for this account now: every run of it pauses at its next message",
        request=None,
        responses=AccountSerializer,
    )
    @action(detail=True, methods=["post"], url_path="stop-sending")
    def stop_sending(self, request, pk=None):
        return self._account_response(pace.account_sending_set(account=self.get_object(), stopped=True))

    @extend_schema(
        summary="Allow sending again: the runs the stop paused go on (after a rest, if one runs)",
        request=None,
        responses=AccountSerializer,
    )
    @action(detail=True, methods=["post"], url_path="allow-sending")
    def allow_sending(self, request, pk=None):
        return self._account_response(pace.account_sending_set(account=self.get_object(), stopped=False))

    @extend_schema(
        summary="End the account's rest now; its paused runs go on unless told to stay paused",
        request=None,
        responses={200: AccountSerializer, 409: ERRORS[409]},
    )
    @action(detail=True, methods=["post"], url_path="end-rest")
    def end_rest(self, request, pk=None):
        return self._account_response(pace.account_rest_end_now(account=self.get_object()))

    @extend_schema(
        summary="Keep the runs a rest paused paused when it ends (resume them yourself)",
        request=None,
        responses={200: AccountSerializer, 409: ERRORS[409]},
    )
    @action(detail=True, methods=["post"], url_path="keep-runs-paused")
    def keep_runs_paused(self, request, pk=None):
        return self._account_response(pace.account_rest_keep_runs_paused(account=self.get_object()))

    @extend_schema(
        summary="Set the account's ingestion hours and bandwidth cap",
        description="Transfers in flight follow within seconds: a part outside the hours is not sent (the run stops "
        "and goes on when they open, keeping what it downloaded); the cap is shared by every worker process.",
        request=IngestLimitsSerializer,
        responses={200: AccountSerializer, 400: ERRORS[400]},
    )
    @action(detail=True, methods=["post"], url_path="ingest-limits")
    def set_ingest_limits(self, request, pk=None):
        account = self.get_object()
        data = IngestLimitsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            limits = ingest_limits.ingest_limits_clean(
                start_hour=values["ingest_start_hour"],
                end_hour=values["ingest_end_hour"],
                timezone_name=values["ingest_timezone"],
                bandwidth=values.get("ingest_bandwidth"),
            )
        except DjangoValidationError as exc:
            raise ValidationError(exc.message_dict) from None
        return self._account_response(ingest_limits.account_ingest_limits_set(account=account, limits=limits))

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
