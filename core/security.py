"""Login hardening: the lockout answer (django-axes) and the throttled API token endpoint.

The Content-Security-Policy header comes from django-csp (settings.CONTENT_SECURITY_POLICY).
"""

import ipaddress
import math
import re
from dataclasses import dataclass
from datetime import datetime

from axes.models import AccessAttempt
from axes.utils import reset as axes_reset
from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.debug import SafeExceptionReporterFilter
from drf_spectacular.utils import extend_schema
from rest_framework import parsers, renderers, serializers, status
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from core.access import ANYONE, ScopeAndRole
from core.models import ApiToken
from core.roles import is_operator
from core.tokens import api_token_create


def _trusted(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    return any(address in network for network in settings.TRUSTED_PROXIES)


def client_ip(request) -> str:
    """AXES_CLIENT_IP_CALLABLE, the token endpoint's throttle and the audit trail: who is asking.

    X-Forwarded-For is read only when the peer is a proxy named in TRUSTED_PROXIES, from the right (what the
    nearest proxy appended) up to the first address that is not a trusted proxy; anything further left was
    written by the client. A client talking to web directly cannot name an address.
    """
    peer = request.META.get("REMOTE_ADDR", "")
    try:
        seen = ipaddress.ip_address(peer)
    except ValueError:
        return peer
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    for hop in reversed([item.strip() for item in forwarded.split(",") if item.strip()]):
        if not _trusted(seen):
            break
        try:
            seen = ipaddress.ip_address(hop)
        except ValueError:
            break  # not an address: the last trusted proxy is all that is known
    return str(seen)


def cooloff_minutes() -> int:
    return math.ceil(settings.AXES_COOLOFF_TIME.total_seconds() / 60)


def lockout_message() -> str:
    minutes = cooloff_minutes()
    return (
        f"Too many failed logins for this user from your address. Try again in {minutes} minutes, "
        "or ask an operator to unlock it on the Accounts page."
    )


@dataclass(frozen=True)
class ConsoleLogin:
    """A login to this console, with its role and whether throttling locks it out now."""

    username: str
    is_operator: bool
    is_active: bool
    last_login: datetime | None
    locked_until: datetime | None  # a lockout in force, from any address


def _lockouts() -> dict[str, datetime]:
    """Usernames locked out now (django-axes counts per username and address): until when, the latest."""
    since = timezone.now() - settings.AXES_COOLOFF_TIME
    locked: dict[str, datetime] = {}
    attempts = AccessAttempt.objects.filter(
        failures_since_start__gte=settings.AXES_FAILURE_LIMIT, attempt_time__gte=since
    )
    for username, attempt_time in attempts.values_list("username", "attempt_time"):
        locked[username] = max(locked.get(username, attempt_time), attempt_time) + settings.AXES_COOLOFF_TIME
    return locked


def console_logins() -> list[ConsoleLogin]:
    """Every login of the console, operators first; a locked-out one says until when."""
    locked = _lockouts()
    users = get_user_model().objects.prefetch_related("groups").order_by("username")
    logins = [
        ConsoleLogin(
            username=user.username,
            is_operator=is_operator(user),
            is_active=user.is_active,
            last_login=user.last_login,
            locked_until=locked.get(user.username),
        )
        for user in users
    ]
    return sorted(logins, key=lambda login: (not login.is_operator, login.username))


def login_unlock(*, username: str) -> int:
    """Forget the failed logins of `username` from every address, so it can log in at once; how many were reset."""
    return axes_reset(username=username)


def _wants_json(request: HttpRequest) -> bool:
    return request.path.startswith("/api/") or "application/json" in request.headers.get("Accept", "")


def lockout_response(request: HttpRequest, original_response=None, credentials=None) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: the login page with the reason, or JSON for the API; 429 with Retry-After."""
    retry_after = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
    if _wants_json(request):
        response = JsonResponse({"message": lockout_message()}, status=status.HTTP_429_TOO_MANY_REQUESTS)
    else:
        response = render(
            request, "core/lockout.html", {"message": lockout_message()}, status=status.HTTP_429_TOO_MANY_REQUESTS
        )
    response["Retry-After"] = retry_after
    return response


class TokenLoginThrottle(SimpleRateThrottle):
    """Token requests per client address, counted in the cache (shared by every process in production)."""

    scope = "api-token"

    def get_rate(self) -> str:
        return settings.API_TOKEN_THROTTLE_RATE

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": client_ip(request)}


class TokenLoginSerializer(AuthTokenSerializer):
    name = serializers.CharField(required=False, default="api login", max_length=100)
    scope = serializers.ChoiceField(
        choices=ApiToken.Scope.choices, required=False, help_text="write for operators, read for viewers by default"
    )
    days = serializers.IntegerField(required=False, help_text="how long it lasts; API_TOKEN_DEFAULT_DAYS by default")
    expires_at = serializers.DateTimeField(read_only=True)


class ThrottledObtainAuthToken(ScopeAndRole, APIView):
    """`/api/auth/token/`: a username and password make a new named token (core.tokens), shown this once;
    rate limited, and answering an axes lockout like the login page."""

    throttle_classes = [TokenLoginThrottle]
    # The default authentication stays: a browser's session must send its CSRF token here too.
    login_required = False  # the password sent is the credential
    changes_by = ANYONE
    parser_classes = [parsers.FormParser, parsers.MultiPartParser, parsers.JSONParser]
    renderer_classes = [renderers.JSONRenderer]

    @extend_schema(request=TokenLoginSerializer, responses={200: TokenLoginSerializer})
    def post(self, request, *args, **kwargs):
        serializer = TokenLoginSerializer(data=request.data, context={"request": request})
        try:
            serializer.is_valid(raise_exception=True)
        except ValidationError:
            # axes flags the (DRF) request it saw fail; its middleware only sees Django's request.
            if getattr(request, "axes_locked_out", False):
                response = Response({"message": lockout_message()}, status=status.HTTP_429_TOO_MANY_REQUESTS)
                response["Retry-After"] = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
                return response
            raise
        data = serializer.validated_data
        user = data["user"]
        default_scope = ApiToken.Scope.WRITE if is_operator(user) else ApiToken.Scope.READ
        token, secret = api_token_create(
            owner=user, name=data["name"], scope=data.get("scope", default_scope), days=data.get("days")
        )
        # The audit trail names the token that was made, not an anonymous caller.
        request._request.user = user
        return Response({"token": secret, "name": token.name, "scope": token.scope, "expires_at": token.expires_at})


obtain_auth_token = ThrottledObtainAuthToken.as_view()


class SecretsReporterFilter(SafeExceptionReporterFilter):
    """DEFAULT_EXCEPTION_REPORTER_FILTER: error reports hide secrets by name in every frame.

    `sensitive_variables` covers our own functions; this also covers frames we cannot decorate (Telethon's
    sign-in holds the 2FA password, its session code holds the auth key).
    """

    secret_names = re.compile(r"password|passwd|session|api_hash|auth_key|secret|token|code_hash|plaintext", re.I)

    def get_traceback_frame_variables(self, request, tb_frame):
        variables = super().get_traceback_frame_variables(request, tb_frame)
        if not self.is_active(request):
            return variables
        return [
            (name, self.cleansed_substitute if self.secret_names.search(name) else value) for name, value in variables
        ]
