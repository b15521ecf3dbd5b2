"""Static files, uploaded media and raw files: the local disk or the object store every machine shares."""

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.env import envbool, envint, envstr, var_dir
from config.settings.environment import BASE_DIR, DEBUG
from config.storage import default_storage_for

STATIC_URL = "static/"
# `make run` serves static/ from the source folders with DEBUG off too; production collects them.
WHITENOISE_USE_FINDERS = envbool("WHITENOISE_USE_FINDERS", DEBUG)
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
MEDIA_ROOT = Path(envstr("MEDIA_ROOT", str(var_dir(BASE_DIR) / "media")))
MEDIA_URL = "media/"
# Media and raw files: the local disk, or the object store every machine shares (config/storage.py).
STORAGE_URL = envstr("STORAGE_URL", "")
STORAGES = {
    "default": default_storage_for(STORAGE_URL),
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# Download links to raw files (packages/services/downloads.py): how long one works, and whether viewers may
# make them too (operators always may).
DOWNLOAD_LINK_SECONDS = envint("DOWNLOAD_LINK_SECONDS", 3600, minimum=60)
DOWNLOAD_LINKS_FOR_VIEWERS = envbool("DOWNLOAD_LINKS_FOR_VIEWERS", False)
# The object store's address as the people downloading reach it (a download link redirects there), when it
# is not STORAGE_URL's (compose's MinIO is `minio:9000` inside, published elsewhere); empty: STORAGE_URL's.
STORAGE_DOWNLOAD_ENDPOINT = envstr("STORAGE_DOWNLOAD_ENDPOINT", "").rstrip("/")
if STORAGE_DOWNLOAD_ENDPOINT and not STORAGE_DOWNLOAD_ENDPOINT.startswith(("http://", "https://")):
    raise ImproperlyConfigured(
        f"STORAGE_DOWNLOAD_ENDPOINT={STORAGE_DOWNLOAD_ENDPOINT!r} must start with http:// or https:// "
        "(the object store's address as browsers reach it, e.g. https://files.example.org)."
    )
