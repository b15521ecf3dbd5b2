"""Where the project lives and the two servers every process needs: PostgreSQL and Redis."""

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import envbool, envint, envstr, load_local_stack

BASE_DIR = Path(__file__).resolve().parent.parent.parent
load_local_stack(BASE_DIR)

DEBUG = envbool("DJANGO_DEBUG", False)

# Which process this is (Procfile, docker-compose.yml): each is given only the secrets it uses (docs/security.md).
PROCESS = envstr("STASHCAST_PROCESS", "")
# Flower reads the broker only: it gets no database, so not the database's password either.
NO_DATABASE = PROCESS == "flower"

DATABASE_URL = envstr("DATABASE_URL", "")
if NO_DATABASE:
    DATABASES = {"default": {"ENGINE": "django.db.backends.dummy"}}  # any query fails loudly
elif not DATABASE_URL:
    raise ImproperlyConfigured(
        "DATABASE_URL is not set. Use `make run` / `make test` (they start an embedded "
        "PostgreSQL) or point DATABASE_URL at a PostgreSQL server."
    )
else:
    # A kept connection (DATABASE_CONN_MAX_AGE, compose's web: 60 s) is checked before a request reuses it.
    DATABASES = {
        "default": dj_database_url.parse(
            DATABASE_URL, conn_max_age=envint("DATABASE_CONN_MAX_AGE", 0, minimum=0), conn_health_checks=True
        )
    }
    if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        raise ImproperlyConfigured("Stashcast needs PostgreSQL (advisory locks, SKIP LOCKED); DATABASE_URL is not one.")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = envstr("REDIS_URL", "")
if not REDIS_URL:
    raise ImproperlyConfigured("REDIS_URL is not set. Use `make run` / `make test` or point it at a Redis server.")
