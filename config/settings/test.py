"""Tests run against real PostgreSQL and Redis (embedded by `make test`)."""

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.settings.base import *  # noqa: F403
from config.settings.base import BASE_DIR, DATABASES, INSTALLED_APPS, REDIS_URL

DEBUG = False
INSTALLED_APPS = [*INSTALLED_APPS, "tests.claimtest"]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DATABASES["default"]["TEST"] = {"NAME": os.environ.get("STASHCAST_TEST_DB", "test_stashcast")}
# PostgreSQL's own backend, emptied by DELETE between transactional tests (tests/support/database/base.py).
DATABASES["default"]["ENGINE"] = "tests.support.database"

# Under pytest-xdist each test process ("gw0", "gw1", ...) has its own database (pytest-django suffixes its
# name), Redis database, and so Celery queues, and folders; the worker processes a test starts inherit
# PYTEST_XDIST_WORKER, so they land in the same ones.
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
_test_index = int(XDIST_WORKER.removeprefix("gw") or 0)

# A Redis database of its own, so tests never touch a running stack's queues (0) nor each other's.
_redis_db = int(os.environ.get("STASHCAST_TEST_REDIS_DB", "1")) + _test_index
if _redis_db > 15:
    raise ImproperlyConfigured(
        f"Test process {XDIST_WORKER} would need Redis database {_redis_db}; Redis has 16 (0-15): "
        "run fewer test processes (STASHCAST_TEST_WORKERS) or a lower STASHCAST_TEST_REDIS_DB."
    )
REDIS_URL = os.environ.get("TEST_REDIS_URL", REDIS_URL.rsplit("/", 1)[0] + f"/{_redis_db}")
CELERY_BROKER_URL = REDIS_URL
# Tests point SANDBOX_PATH at a temporary folder (tests/conftest.py); worker processes get it by env.
SANDBOX_PATH = Path(os.environ.get("SANDBOX_PATH", BASE_DIR / "var" / f"test-sandbox{XDIST_WORKER}"))
MEDIA_ROOT = Path(os.environ.get("MEDIA_ROOT", BASE_DIR / "var" / f"test-media{XDIST_WORKER}"))
TELEGRAM_BACKEND = "sandbox"
SESSION_ENCRYPTION_KEYS = ["r8vIfkXR7nZbH0x7o3iJSxM6pxN5zeiWk4uVxG7HhS0="]
# Not the developer's own `make run` stack: a test that wants one writes this file.
STACK_PROCESSES_FILE = BASE_DIR / "var" / f"test-processes{XDIST_WORKER}.json"
