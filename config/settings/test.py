"""Tests run against real PostgreSQL and Redis (embedded by `make test`)."""

import os
from pathlib import Path

from config.settings.base import *  # noqa: F403
from config.settings.base import BASE_DIR, DATABASES, INSTALLED_APPS, REDIS_URL

DEBUG = False
INSTALLED_APPS = [*INSTALLED_APPS, "tests.claimtest"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DATABASES["default"]["TEST"] = {"NAME": os.environ.get("STASHCAST_TEST_DB", "test_stashcast")}

# A Redis database of its own, so tests never touch a running stack's queues.
REDIS_URL = os.environ.get(
    "TEST_REDIS_URL", REDIS_URL.rsplit("/", 1)[0] + "/" + os.environ.get("STASHCAST_TEST_REDIS_DB", "1")
)
CELERY_BROKER_URL = REDIS_URL
# Tests point SANDBOX_PATH at a temporary folder (tests/conftest.py); worker processes get it by env.
SANDBOX_PATH = Path(os.environ.get("SANDBOX_PATH", BASE_DIR / "var" / "test-sandbox"))
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "var" / "test-media"))
TELEGRAM_BACKEND = "sandbox"
SESSION_ENCRYPTION_KEYS = ["r8vIfkXR7nZbH0x7o3iJSxM6pxN5zeiWk4uVxG7HhS0="]
