"""Named API tokens: made by a person for a script, shown once, kept as a hash, with a scope and an expiry.

`Authorization: Token <secret>` on the API (and /metrics for an operator's token). A read token may only look;
an expired or revoked one is refused with a 401 that says which. Viewers may make read tokens only; each person
manages their own, operators see and revoke everyone's.
"""

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Q, QuerySet
from django.utils import timezone
from django.utils.formats import date_format
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed
from rest_framework.permissions import SAFE_METHODS, BasePermission

from core.errors import OperatorError
from core.models import ApiToken
from core.roles import is_operator

KEYWORD = "Token"
SECRET_START = "sct_"
PREFIX_CHARS = 12
# last_used_at is written at most this often per token: a script reading in a loop costs no write per request.
LAST_USE_EVERY = timedelta(minutes=1)
READ_ONLY_MESSAGE = (
    "This token may only read (scope read); make a token with scope write on the Tokens page to change things."
)
NAME_MISSING = "Give the token a name that says what uses it (e.g. backup script)."
MAKE_NEW = "make a new one on the Tokens page."
VIEWER_WRITE_MESSAGE = "Viewers may make read tokens only; ask an operator if a script must change things."
# A viewer cannot make the write token READ_ONLY_MESSAGE points to.
VIEWER_TOKEN_MESSAGE = "A viewer's token may only read; ask an operator if a script must change things."


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def api_token_create(*, owner, name: str, scope: str, days: int | None = None) -> tuple[ApiToken, str]:
    """A new token and its secret, which is never stored and cannot be shown again."""
    name = name.strip()
    days = settings.API_TOKEN_DEFAULT_DAYS if days is None else days
    errors = {}
    if not name:
        errors["name"] = [NAME_MISSING]
    elif len(name) > ApiToken._meta.get_field("name").max_length:
        errors["name"] = ["Keep the name within 100 characters."]
    if scope not in ApiToken.Scope.values:
        errors["scope"] = ["Choose read or write."]
    if not 1 <= days <= settings.API_TOKEN_MAX_DAYS:
        errors["days"] = [f"A token lasts from 1 to {settings.API_TOKEN_MAX_DAYS} days."]
    if errors:
        raise ValidationError(errors)
    if scope == ApiToken.Scope.WRITE and not is_operator(owner):
        raise OperatorError(VIEWER_WRITE_MESSAGE, field="scope")
    secret = SECRET_START + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        owner=owner,
        name=name,
        scope=scope,
        prefix=secret[:PREFIX_CHARS],
        secret_hash=secret_hash(secret),
        expires_at=timezone.now() + timedelta(days=days),
    )
    return token, secret


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    """Revoking twice keeps the first moment."""
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
    return token


def api_tokens_visible(*, user) -> QuerySet[ApiToken]:
    """Operators see everyone's tokens, anyone else their own."""
    tokens = ApiToken.objects.select_related("owner")
    return tokens if is_operator(user) else tokens.filter(owner=user)


def _when(moment) -> str:
    return date_format(timezone.localtime(moment), "j M Y, H:i T")


def api_token_check(*, secret: str) -> ApiToken:
    """The usable token of this secret; AuthenticationFailed saying why not (unknown, expired, revoked)."""
    token = ApiToken.objects.select_related("owner").filter(secret_hash=secret_hash(secret)).first()
    if token is None:
        raise AuthenticationFailed("This token is not known; check it, or make a new one on the Tokens page.")
    if token.revoked_at is not None:
        raise AuthenticationFailed(f"This token was revoked on {_when(token.revoked_at)}; {MAKE_NEW}")
    if token.expired:
        raise AuthenticationFailed(f"This token expired on {_when(token.expires_at)}; {MAKE_NEW}")
    if not token.owner.is_active:
        raise AuthenticationFailed("This token's login is deactivated.")
    now = timezone.now()
    if token.last_used_at is None or token.last_used_at < now - LAST_USE_EVERY:
        # Conditional, for requests arriving together; an UPDATE sends no signal, so a read leaves no audit entry.
        ApiToken.objects.filter(pk=token.pk).filter(
            Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USE_EVERY)
        ).update(last_used_at=now)
    return token


def api_token_from_header(request) -> ApiToken | None:
    """The token of `Authorization: Token <secret>`; None when another kind of authorization is sent."""
    words = get_authorization_header(request).split()
    if not words or words[0].lower() != KEYWORD.lower().encode():
        return None
    if len(words) != 2:
        raise AuthenticationFailed(f"Send `Authorization: {KEYWORD} <secret>`, the secret in one piece.")
    try:
        secret = words[1].decode()
    except UnicodeDecodeError:
        raise AuthenticationFailed("This token is not known; check it, or make a new one on the Tokens page.") from None
    return api_token_check(secret=secret)


class ApiTokenAuthentication(BaseAuthentication):
    """DRF: `Authorization: Token <secret>`; request.auth is the ApiToken (the audit trail names it)."""

    def authenticate(self, request):
        token = api_token_from_header(request)
        return None if token is None else (token.owner, token)

    def authenticate_header(self, request) -> str:
        return KEYWORD


class TokenScopeAllows(BasePermission):
    """A read token may only look, whoever owns it (every API view checks this: core/access.py)."""

    message = READ_ONLY_MESSAGE

    def has_permission(self, request, view) -> bool:
        token = request.auth
        if isinstance(token, ApiToken) and token.scope == ApiToken.Scope.READ and request.method not in SAFE_METHODS:
            self.message = READ_ONLY_MESSAGE if is_operator(token.owner) else VIEWER_TOKEN_MESSAGE
            return False
        return True
