"""Secrets, hosts, logins and the browser's rules (docs/security.md)."""

import ipaddress
import secrets
from datetime import timedelta

from csp import constants as csp_constants
from django.core.exceptions import ImproperlyConfigured

from config.env import envbool, envint, envlist, envstr
from config.settings.environment import DEBUG, PROCESS

# Flower signs nothing that outlives it (no sessions, no links): a key of its own, made at start, not the site's.
SECRET_KEY = (
    secrets.token_urlsafe(50)
    if PROCESS == "flower"
    else envstr("DJANGO_SECRET_KEY", "insecure-local-key" if DEBUG else None)
)
ALLOWED_HOSTS = envlist("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = envlist("DJANGO_CSRF_TRUSTED_ORIGINS", [])
# Fernet keys of the Telegram sessions kept in the database, newest first; older keys still decrypt.
SESSION_ENCRYPTION_KEYS = envlist("STASHCAST_SESSION_KEYS", [])

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Failed logins (pages, admin, /api/auth/token/) are counted per username + client address by django-axes.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "django.contrib.auth.backends.ModelBackend"]
AXES_FAILURE_LIMIT = envint("AXES_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=envint("AXES_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# The lockout runs from the last counted failure; tries during it are refused without extending it.
AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT = False
AXES_LOCKOUT_CALLABLE = "core.security.lockout_response"
AXES_CLIENT_IP_CALLABLE = "core.security.client_ip"
# Axes logs "AXES: BEGIN" in every process that loads Django (worker, beat, Flower, each manage.py): only the
# web process, which serves the logins, turns it on (Procfile), so a start says it once.
AXES_VERBOSE = envbool("AXES_VERBOSE", False)

PROXIES_HELP = (
    "Name the reverse proxies in front of web by their addresses or networks, comma-separated "
    "(e.g. 127.0.0.1,10.0.0.0/8); empty: none, the peer is the client."
)


def trusted_proxies_parse(raw: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """DJANGO_TRUSTED_PROXIES: the reverse proxies' addresses or networks, comma-separated."""
    try:
        return [ipaddress.ip_network(item.strip()) for item in raw.split(",") if item.strip()]
    except ValueError as exc:
        raise ImproperlyConfigured(f"DJANGO_TRUSTED_PROXIES: {exc}. {PROXIES_HELP}") from exc


# X-Forwarded-For is read only from these peers (core.security.client_ip); nobody else can set an address.
TRUSTED_PROXIES = trusted_proxies_parse(envstr("DJANGO_TRUSTED_PROXIES", ""))
# /api/auth/token/ is also rate limited per client address (core.security.TokenLoginThrottle).
API_TOKEN_THROTTLE_RATE = envstr("API_TOKEN_THROTTLE_RATE", "10/min")
# Named API tokens (core.tokens): how long a new one lasts unless its maker says otherwise, and at most.
API_TOKEN_DEFAULT_DAYS = envint("API_TOKEN_DEFAULT_DAYS", 90, minimum=1)
API_TOKEN_MAX_DAYS = envint("API_TOKEN_MAX_DAYS", 365, minimum=1)
if API_TOKEN_DEFAULT_DAYS > API_TOKEN_MAX_DAYS:
    raise ImproperlyConfigured(
        f"API_TOKEN_DEFAULT_DAYS ({API_TOKEN_DEFAULT_DAYS}) is more than API_TOKEN_MAX_DAYS ({API_TOKEN_MAX_DAYS})."
    )

# Error reports (DEBUG off) hide 2FA passwords, sessions and keys in every traceback frame.
DEFAULT_EXCEPTION_REPORTER_FILTER = "core.security.SecretsReporterFilter"

# Scripts, styles, images and requests from this origin only: the vendored htmx and static/js/app.js are files.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [csp_constants.SELF],
        "script-src": [csp_constants.SELF],
        "style-src": [csp_constants.SELF],
        "img-src": [csp_constants.SELF, "data:"],
        "font-src": [csp_constants.SELF],
        "connect-src": [csp_constants.SELF],
        "object-src": [csp_constants.NONE],
        "base-uri": [csp_constants.SELF],
        "form-action": [csp_constants.SELF],
        "frame-ancestors": [csp_constants.NONE],
    }
}
