"""Production: behind HTTPS, secrets from the environment only."""

from config.env import envbool, envint
from config.settings.base import *  # noqa: F403
from config.settings.base import SESSION_ENCRYPTION_KEYS

DEBUG = False
if not SESSION_ENCRYPTION_KEYS:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("STASHCAST_SESSION_KEYS must be set (comma-separated Fernet keys, newest first).")

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = envbool("DJANGO_SECURE_SSL_REDIRECT", True)
SECURE_HSTS_SECONDS = envint("DJANGO_SECURE_HSTS_SECONDS", 31536000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"

STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
