"""Login hardening: the lockout answer (django-axes) and the throttled API token endpoint.

The Content-Security-Policy header comes from django-csp (settings.CONTENT_SECURITY_POLICY).
"""

import math
import re

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.debug import SafeExceptionReporterFilter
from rest_framework import status
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.throttling import SimpleRateThrottle


def client_ip(request) -> str:
    """AXES_CLIENT_IP_CALLABLE: the address DRF's throttles see too (the same NUM_PROXIES rule).

    Behind TRUSTED_PROXIES proxies, the client is that many entries from the right of X-Forwarded-For;
    anything further left was written by the client and is not trusted.
    """
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if settings.TRUSTED_PROXIES and forwarded:
        addresses = [address.strip() for address in forwarded.split(",")]
        return addresses[-min(settings.TRUSTED_PROXIES, len(addresses))]
    return request.META.get("REMOTE_ADDR", "")


def lockout_message() -> str:
    minutes = math.ceil(settings.AXES_COOLOFF_TIME.total_seconds() / 60)
    return (
        f"Too many failed logins for this user from your address. Try again in {minutes} minutes, "
        "or ask another operator to unlock it (manage.py axes_reset_username NAME)."
    )


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
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class ThrottledObtainAuthToken(ObtainAuthToken):
    """`/api/auth/token/`: DRF's token view, rate limited, and answering an axes lockout like the login page."""

    throttle_classes = [TokenLoginThrottle]

    def post(self, request, *args, **kwargs):
        try:
            return super().post(request, *args, **kwargs)
        except ValidationError:
            # axes flags the (DRF) request it saw fail; its middleware only sees Django's request.
            if getattr(request, "axes_locked_out", False):
                response = Response({"message": lockout_message()}, status=status.HTTP_429_TOO_MANY_REQUESTS)
                response["Retry-After"] = str(int(settings.AXES_COOLOFF_TIME.total_seconds()))
                return response
            raise


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
