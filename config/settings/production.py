"""Production: behind an HTTPS reverse proxy, secrets from the environment only.

`manage.py check --deploy --fail-level WARNING` passes with these defaults
(tests/config/test_settings.py keeps it so).
"""

from cryptography.fernet import Fernet
from django.core.exceptions import ImproperlyConfigured

from config.env import envbool, envint, envlist, envstr
from config.settings.base import *  # noqa: F403
from config.settings.base import PROCESS, REDIS_URL, SESSION_ENCRYPTION_KEYS, STORAGES
from config.settings.security import trusted_proxies_parse

DEBUG = False
# Read again: base falls back to a local key when DJANGO_DEBUG is on, production never does (Flower has its own).
if PROCESS != "flower":
    SECRET_KEY = envstr("DJANGO_SECRET_KEY")

ALLOWED_HOSTS = envlist("DJANGO_ALLOWED_HOSTS", [])
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured("DJANGO_ALLOWED_HOSTS must be set (comma-separated host names, e.g. stash.example.com).")

# Flower and beat never open a Telegram session, so they are given no session keys (core.crypto fails loudly if
# anything there ever tried).
if not SESSION_ENCRYPTION_KEYS and PROCESS not in ("flower", "beat"):
    raise ImproperlyConfigured(
        "STASHCAST_SESSION_KEYS must be set (comma-separated Fernet keys, newest first). Make one with: "
        'python -c "from cryptography.fernet import Fernet; print(Fernet.generate_key().decode())"'
    )
for _position, _key in enumerate(SESSION_ENCRYPTION_KEYS, start=1):
    try:
        Fernet(_key)
    except ValueError:
        raise ImproperlyConfigured(
            f"STASHCAST_SESSION_KEYS: key {_position} is not a Fernet key (32 url-safe base64-encoded bytes)."
        ) from None

# The proxy terminates TLS and must set (not pass through) X-Forwarded-Proto.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = envbool("DJANGO_SECURE_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = envint("DJANGO_SECURE_HSTS_SECONDS", 31536000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = envbool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = envbool("DJANGO_SECURE_HSTS_PRELOAD", True)
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"

STORAGES = {
    **STORAGES,
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# Login throttling sees the client's address, not the proxy's: the proxy must append it to X-Forwarded-For.
# DJANGO_TRUSTED_PROXIES names the proxies (addresses or networks) whose X-Forwarded-For is read; by default the
# host's loopback and the private networks a proxy beside the containers comes from (docker-compose.yml).
TRUSTED_PROXIES = trusted_proxies_parse(
    envstr("DJANGO_TRUSTED_PROXIES", "127.0.0.0/8,::1,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16")
)
# One cache for every web process, so the token endpoint's rate limit counts them all.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL}}
