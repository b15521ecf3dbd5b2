"""Settings shared by every environment; everything comes from the environment."""

from datetime import timedelta
from pathlib import Path

import dj_database_url
from csp import constants as csp_constants
from django.core.exceptions import ImproperlyConfigured

from config.env import envbool, envint, envlist, envstr, load_local_stack, var_dir
from config.storage import default_storage_for

BASE_DIR = Path(__file__).resolve().parent.parent.parent
load_local_stack(BASE_DIR)

DEBUG = envbool("DJANGO_DEBUG", False)
SECRET_KEY = envstr("DJANGO_SECRET_KEY", "insecure-local-key" if DEBUG else None)
ALLOWED_HOSTS = envlist("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = envlist("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django_htmx",
    "template_partials",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_celery_beat",
    "axes",
    "csp",
    "core",
    "telegram",
    "accounts",
    "ingestion",
    "packages",
    "reminders",
    "operations",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Before CsrfViewMiddleware, the first to read a form: an oversized body gets an answer a person can use.
    "core.middleware.RequestBodyLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "core.roles.ViewerReadOnlyMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a lockout flagged during the request into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.context_processors.navigation",
            ],
        },
    }
]

DATABASE_URL = envstr("DATABASE_URL", "")
if not DATABASE_URL:
    raise ImproperlyConfigured(
        "DATABASE_URL is not set. Use `make run` / `make test` (they start an embedded "
        "PostgreSQL) or point DATABASE_URL at a PostgreSQL server."
    )
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

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# A reminder may target thousands of groups, each a ticked box of one form.
DATA_UPLOAD_MAX_NUMBER_FIELDS = 20_000
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

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

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "core.roles.IsOperatorOrReadOnly",
    ],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "core.api.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Stashcast API",
    "DESCRIPTION": "Telegram archive ingestion and paced broadcast reminders.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "COMPONENT_SPLIT_REQUEST": True,
    # Every kind of run shares one status vocabulary.
    "ENUM_NAME_OVERRIDES": {
        "RunStatusEnum": "core.models.RunStatus",
        "GroupingRuleEnum": "packages.models.GroupingRule",
        "RepackDecisionEnum": "packages.models.RepackDecision",
    },
}

INGEST_INTERVAL_MINUTES = envint("INGEST_INTERVAL_MINUTES", 10, minimum=1)
CATALOG_AUDIT_HOURS = envint("CATALOG_AUDIT_HOURS", 6, minimum=1)

# Celery: at-least-once delivery, so every unit of work is also claimed in the database.
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_SERIALIZER = "json"
CELERY_WORKER_SEND_TASK_EVENTS = True
CELERY_TASK_SEND_SENT_EVENT = True
CELERY_TASK_DEFAULT_QUEUE = "default"
CELERY_TASK_ROUTES = {
    "ingestion.tasks.ingestion_run_execute": {"queue": "ingest"},
    # By name, not reminder_run_*: that glob also caught the one-minute reminder_runs_auto_resume, which then
    # waited on the fan-out queue behind long runs.
    "reminders.tasks.reminder_run_execute": {"queue": "fanout"},
    "packages.tasks.package_send_execute": {"queue": "fanout"},
}
# Above the longest task slice, or Redis redelivers a task that is still running.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": envint("CELERY_VISIBILITY_TIMEOUT", 4 * 3600, minimum=1),
    # How often workers look for unacknowledged tasks past the timeout (kombu: interval × throttle).
    "unacked_restore_interval": envint("CELERY_UNACKED_RESTORE_INTERVAL", 10, minimum=1),
    "unacked_restore_throttle": envint("CELERY_UNACKED_RESTORE_THROTTLE", 10, minimum=1),
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_BEAT_SCHEDULE = {
    "reap-stale-runs": {"task": "core.tasks.runs_reap_all", "schedule": 60.0},
    "ingestion-cycle": {"task": "ingestion.tasks.ingestion_cycle_start", "schedule": 60.0 * INGEST_INTERVAL_MINUTES},
    "ingestion-recover": {"task": "ingestion.tasks.ingestion_recover", "schedule": 3600.0},
    "raw-files-purge": {"task": "packages.tasks.raw_files_purge_expired", "schedule": 3600.0},
    # Every package's destination messages exist, every destination document is a package (ingestion/audit.py).
    "catalog-audit": {
        "task": "ingestion.tasks.catalog_audit",
        "schedule": 3600.0 * CATALOG_AUDIT_HOURS,
    },
}
CELERY_WORKER_HIJACK_ROOT_LOGGER = False

# Work claiming
WORK_STALE_AFTER_SECONDS = envint("WORK_STALE_AFTER_SECONDS", 300, minimum=5)
# Beats on a thread of its own (core.engine); a third of the threshold leaves a live run two beats of slack.
WORK_HEARTBEAT_SECONDS = envint("WORK_HEARTBEAT_SECONDS", max(1, WORK_STALE_AFTER_SECONDS // 3), minimum=1)
if WORK_HEARTBEAT_SECONDS * 2 > WORK_STALE_AFTER_SECONDS:
    raise ImproperlyConfigured(
        f"WORK_HEARTBEAT_SECONDS={WORK_HEARTBEAT_SECONDS} is not well below WORK_STALE_AFTER_SECONDS="
        f"{WORK_STALE_AFTER_SECONDS}: live runs would be reaped as dead. Use at most half of it (a third is the "
        "default)."
    )
WORK_MAX_REQUEUES = envint("WORK_MAX_REQUEUES", 3, minimum=0)
# How long a send waits out Redis not answering (a restart) before its run pauses, saying why.
REDIS_PATIENCE_SECONDS = envint("REDIS_PATIENCE_SECONDS", 60, minimum=1)
# A run still queued after this long gets its task sent again (the broker may have lost it).
WORK_RESEND_QUEUED_AFTER_SECONDS = envint("WORK_RESEND_QUEUED_AFTER_SECONDS", 1800, minimum=60)

# Telegram
TELEGRAM_API_ID = envint("TELEGRAM_API_ID", 0)
TELEGRAM_API_HASH = envstr("TELEGRAM_API_HASH", "")
TELEGRAM_BACKEND = envstr("TELEGRAM_BACKEND", "telethon" if TELEGRAM_API_ID and TELEGRAM_API_HASH else "sandbox")
if TELEGRAM_BACKEND not in {"telethon", "sandbox"}:
    raise ImproperlyConfigured(f"TELEGRAM_BACKEND={TELEGRAM_BACKEND!r}; use telethon or sandbox.")
if TELEGRAM_BACKEND == "telethon" and not (TELEGRAM_API_ID and TELEGRAM_API_HASH):
    raise ImproperlyConfigured("TELEGRAM_BACKEND=telethon needs TELEGRAM_API_ID and TELEGRAM_API_HASH.")
# File transfers (docs/operations.md, "Transfer speed"): parts of one file requested at once (1 = one at a
# time), the connections an account opens to a file's data centre for them, and the parts in flight of all
# the account's transfers together (a download and an upload may overlap).
TRANSFER_PARTS_IN_FLIGHT = envint("TRANSFER_PARTS_IN_FLIGHT", 8, minimum=1)
TRANSFER_CONNECTIONS = envint("TRANSFER_CONNECTIONS", 4, minimum=1)
TRANSFER_ACCOUNT_PARTS_IN_FLIGHT = envint("TRANSFER_ACCOUNT_PARTS_IN_FLIGHT", 16, minimum=1)
SANDBOX_PATH = Path(envstr("SANDBOX_PATH", str(var_dir(BASE_DIR) / "sandbox")))
# Fernet keys, newest first; older keys still decrypt.
SESSION_ENCRYPTION_KEYS = envlist("STASHCAST_SESSION_KEYS", [])

# Where the console's /flower/ proxy finds Flower (run with --url_prefix=flower), and the basic auth secret
# only the proxy sends (core/flower.py). Flower itself is never published.
FLOWER_URL = envstr("FLOWER_URL", "http://127.0.0.1:5555/")
FLOWER_BASIC_AUTH = envstr("FLOWER_BASIC_AUTH", "")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        # Shows the Celery task's name and id inside tasks, nothing in their place elsewhere.
        "task": {
            "()": "core.logging.TaskFormatter",
            "fmt": "%(asctime)s %(levelname)s %(task)s%(name)s: %(message)s",
        },
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "task"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        "telethon": {"level": "WARNING"},
    },
}

# Ingestion
INGEST_JITTER_SECONDS = envint("INGEST_JITTER_SECONDS", 30, minimum=0)
INGEST_MAX_SKIP_ATTEMPTS = envint("INGEST_MAX_SKIP_ATTEMPTS", 5, minimum=1)
INGEST_MAX_PACKAGE_BYTES = envint("INGEST_MAX_PACKAGE_BYTES", 20 * 1024**3, minimum=1)
INGEST_FLOOD_SLEEP_MAX_SECONDS = envint("INGEST_FLOOD_SLEEP_MAX_SECONDS", 60, minimum=0)
INGEST_TRANSIENT_RETRIES = envint("INGEST_TRANSIENT_RETRIES", 3, minimum=0)
# A volume set waits this long after its newest volume before it is taken (more may be on their way), and
# a set whose numbering may go on (its last volume as big as its first) waits up to INGEST_SET_OPEN_MAX_SECONDS.
# One process at a time talks to Telegram as an account (core/leases.py): how long an opener waits for the
# session, how long an ingestion cycle waits to get it back after handing it over, how long fan-out waits.
TELEGRAM_SESSION_WAIT_SECONDS = envint("TELEGRAM_SESSION_WAIT_SECONDS", 30, minimum=0)
INGEST_SESSION_HANDOVER_WAIT_SECONDS = envint("INGEST_SESSION_HANDOVER_WAIT_SECONDS", 120, minimum=0)
REMINDER_SESSION_WAIT_SECONDS = envint("REMINDER_SESSION_WAIT_SECONDS", 600, minimum=0)
INGEST_SET_SETTLE_SECONDS = envint("INGEST_SET_SETTLE_SECONDS", 120, minimum=0)
INGEST_SET_OPEN_MAX_SECONDS = envint("INGEST_SET_OPEN_MAX_SECONDS", 6 * 3600, minimum=0)
# Free space kept on the staging disk beyond what a set needs (its download, and its split parts).
INGEST_DISK_MARGIN_BYTES = envint("INGEST_DISK_MARGIN_BYTES", 256 * 1024**2, minimum=0)
INGEST_PROGRESS_EVERY_SECONDS = 2
INGEST_SKIP_RECENT_SCAN_WINDOW_SECONDS = envint("INGEST_SKIP_RECENT_SCAN_WINDOW_SECONDS", 300, minimum=0)
INGEST_EMPTY_SCAN_BACKOFF_THRESHOLD = envint("INGEST_EMPTY_SCAN_BACKOFF_THRESHOLD", 5, minimum=1)
INGEST_EMPTY_SCAN_BACKOFF_EVERY_NTH = envint("INGEST_EMPTY_SCAN_BACKOFF_EVERY_NTH", 5, minimum=1)
# A channel's scan history (one line per channel and cycle) is kept this many days (purged daily).
INGEST_SCAN_HISTORY_DAYS = envint("INGEST_SCAN_HISTORY_DAYS", 14, minimum=1)
CELERY_BEAT_SCHEDULE["channel-scans-purge"] = {"task": "ingestion.tasks.channel_scans_purge", "schedule": 86400.0}
# An unfinished download is kept this long for the next attempt to resume (a killed worker's, a failed set's).
INGEST_PARTIAL_KEEP_HOURS = envint("INGEST_PARTIAL_KEEP_HOURS", 24, minimum=0)
# Every worker sweeps its own host's staging at start and this often (ingestion.recovery.staging_sweep_keep).
INGEST_STAGING_SWEEP_SECONDS = envint("INGEST_STAGING_SWEEP_SECONDS", 3600, minimum=1)
# Previews: a photo posted this close to an archive (same topic, caption naming it) shows it; else the first
# of this many images inside the archive, each made a thumbnail in the listing child (the others: the picker).
PACKAGE_PREVIEW_PHOTO_WINDOW_SECONDS = envint("PACKAGE_PREVIEW_PHOTO_WINDOW_SECONDS", 600, minimum=0)
PACKAGE_PREVIEW_ARCHIVE_IMAGES = envint("PACKAGE_PREVIEW_ARCHIVE_IMAGES", 8, minimum=0)
# Collections: packages of one topic with the same base name or creator, posted this close together.
PACKAGE_COLLECTION_WINDOW_SECONDS = envint("PACKAGE_COLLECTION_WINDOW_SECONDS", 24 * 3600, minimum=0)
INGEST_STAGING_DIR = Path(envstr("INGEST_STAGING_DIR", str(var_dir(BASE_DIR) / "staging")))

# Reminders (DESIGN.md "Reminders"): every account's send pace, shared by all workers through Redis.
REMINDER_MAX_SEND_PER_MINUTE = envint("REMINDER_MAX_SEND_PER_MINUTE", 40, minimum=1)
REMINDER_SEND_BURST = envint("REMINDER_SEND_BURST", 3, minimum=1)
REMINDER_GROUP_CONCURRENCY = envint("REMINDER_GROUP_CONCURRENCY", 3, minimum=1)
# Pause between the parts of one group, so a group's messages do not look machine-fired.
REMINDER_PART_JITTER_MIN_MS = envint("REMINDER_PART_JITTER_MIN_MS", 200, minimum=0)
REMINDER_PART_JITTER_MAX_MS = envint("REMINDER_PART_JITTER_MAX_MS", 500, minimum=0)
if REMINDER_PART_JITTER_MAX_MS < REMINDER_PART_JITTER_MIN_MS:
    raise ImproperlyConfigured("REMINDER_PART_JITTER_MAX_MS must be at least REMINDER_PART_JITTER_MIN_MS.")
REMINDER_TRANSIENT_RETRIES = envint("REMINDER_TRANSIENT_RETRIES", 3, minimum=0)
# A run whose account is busy with another run waits this long before it tries again.
REMINDER_ACCOUNT_BUSY_RETRY_SECONDS = envint("REMINDER_ACCOUNT_BUSY_RETRY_SECONDS", 10, minimum=1)
REMINDER_PROGRESS_EVERY_SECONDS = 2
# The pace adapts under REMINDER_MAX_SEND_PER_MINUTE (docs/operations.md "How the send pace adapts"): each
# FloodWait, SLOWMODE_WAIT or PEER_FLOOD multiplies it by LOWER_PERCENT (never under FLOOR); every RAISE_EVERY
# clean sends add RAISE_PERCENT of the ceiling, up to RECOVER_PERCENT of the pace that drew the last FloodWait.
REMINDER_PACE_LOWER_PERCENT = envint("REMINDER_PACE_LOWER_PERCENT", 70, minimum=1)
REMINDER_PACE_RECOVER_PERCENT = envint("REMINDER_PACE_RECOVER_PERCENT", 90, minimum=1)
if REMINDER_PACE_LOWER_PERCENT >= 100 or REMINDER_PACE_RECOVER_PERCENT > 100:
    raise ImproperlyConfigured(
        "REMINDER_PACE_LOWER_PERCENT must be under 100, and REMINDER_PACE_RECOVER_PERCENT at most 100."
    )
REMINDER_PACE_FLOOR_PER_MINUTE = envint("REMINDER_PACE_FLOOR_PER_MINUTE", 2, minimum=1)
REMINDER_PACE_RAISE_EVERY = envint("REMINDER_PACE_RAISE_EVERY", 50, minimum=0)  # 0: a lowered pace stays low
REMINDER_PACE_RAISE_STEP = envint("REMINDER_PACE_RAISE_PERCENT", 5, minimum=1) / 100
# A pace nobody used for this long is forgotten: the next run starts at the ceiling.
REMINDER_PACE_MEMORY_HOURS = envint("REMINDER_PACE_MEMORY_HOURS", 24, minimum=1)
# Quarantine before a ban: PEER_FLOOD, or this many FloodWaits within the window, rest the account this long.
ACCOUNT_REST_FLOOD_WAITS = envint("ACCOUNT_REST_FLOOD_WAITS", 5, minimum=1)
ACCOUNT_REST_WINDOW_MINUTES = envint("ACCOUNT_REST_WINDOW_MINUTES", 60, minimum=1)
ACCOUNT_REST_HOURS = envint("ACCOUNT_REST_HOURS", 12, minimum=1)
# A run pauses itself when more than this share of its last REMINDER_ERROR_RECENT_GROUPS groups failed (0: never).
REMINDER_ERROR_SHARE_PERCENT = envint("REMINDER_ERROR_SHARE_PERCENT", 20, minimum=0)
REMINDER_ERROR_RECENT_GROUPS = envint("REMINDER_ERROR_RECENT_GROUPS", 50, minimum=1)
REMINDER_OBSERVED_RATE_RUNS = 5
# Uploaded media that no reminder uses (an abandoned compose wizard) is deleted this long after upload.
MEDIA_UNUSED_KEEP_HOURS = envint("MEDIA_UNUSED_KEEP_HOURS", 24, minimum=1)
CELERY_BEAT_SCHEDULE["reminder-media-purge"] = {"task": "reminders.tasks.media_purge_unused", "schedule": 3600.0}
CELERY_BEAT_SCHEDULE["reminder-runs-auto-resume"] = {
    "task": "reminders.tasks.reminder_runs_auto_resume",
    "schedule": 60.0,
}
# Schedule slots (docs/operations.md "Beat"): each minute a catch-up serves the latest slot nothing fired while its
# window is open, and records older ones (and closed windows) as missed runs; it looks this far back.
REMINDER_SLOT_LOOKBACK_HOURS = envint("REMINDER_SLOT_LOOKBACK_HOURS", 24, minimum=1)
CELERY_BEAT_SCHEDULE["reminder-slots-catch-up"] = {
    "task": "reminders.tasks.reminder_slots_catch_up",
    "schedule": 60.0,
    # the next one comes a minute later and does the same work
    "options": {"expires": 60},
}
# A fire task meeting a PostgreSQL or Redis outage retries this many times, backing off up to a minute apart.
REMINDER_FIRE_RETRIES = envint("REMINDER_FIRE_RETRIES", 10, minimum=0)
REMINDER_FIRE_RETRY_MAX_SECONDS = 60
CELERY_BEAT_SCHEDULE["account-rests-end"] = {"task": "accounts.tasks.account_rests_end", "schedule": 60.0}

# Operations: metrics, alerts, health and notifications (operations/metrics.py, core/health.py, docs/operations.md).
# Alert when a run has been running (or runs took on average over 24 h) longer than this.
ALERT_PROCESSING_SECONDS = envint("ALERT_PROCESSING_SECONDS", 3600, minimum=1)
# Alert when more tasks than this wait in one Celery queue.
ALERT_QUEUE_BACKLOG = envint("ALERT_QUEUE_BACKLOG", 100, minimum=0)
# `Authorization: Bearer <METRICS_TOKEN>` may read /metrics and /api/metrics/ (e.g. Prometheus); empty: off.
METRICS_TOKEN = envstr("METRICS_TOKEN", "")
if METRICS_TOKEN and len(METRICS_TOKEN) < 16:
    raise ImproperlyConfigured("METRICS_TOKEN must be at least 16 characters (or empty to turn it off).")
BEAT_HEARTBEAT_SECONDS = 30
# /healthz answers 503 once beat's last tick is older than this.
HEALTH_BEAT_MAX_AGE_SECONDS = envint("HEALTH_BEAT_MAX_AGE_SECONDS", 300, minimum=60)
# Read notifications are deleted this many days after they were last raised.
NOTIFICATION_RETENTION_DAYS = envint("NOTIFICATION_RETENTION_DAYS", 30, minimum=1)
CELERY_BEAT_SCHEDULE["beat-heartbeat"] = {
    "task": "core.tasks.beat_heartbeat",
    "schedule": float(BEAT_HEARTBEAT_SECONDS),
    # A tick stuck behind a backlog proves nothing once the next is due.
    "options": {"expires": BEAT_HEARTBEAT_SECONDS},
}
CELERY_BEAT_SCHEDULE["notifications-purge"] = {"task": "core.tasks.notifications_purge", "schedule": 86400.0}
# A POST's Idempotency-Key (core.idempotency) answers its retries this long.
IDEMPOTENCY_KEEP_HOURS = envint("IDEMPOTENCY_KEEP_HOURS", 24, minimum=1)
CELERY_BEAT_SCHEDULE["idempotent-requests-purge"] = {
    "task": "core.tasks.idempotent_requests_purge",
    "schedule": 3600.0,
}
# Run and run-target statuses are both `status`: each gets its own name in the OpenAPI schema.
SPECTACULAR_SETTINGS.setdefault("ENUM_NAME_OVERRIDES", {})["ReminderRunTargetStatusEnum"] = (
    "reminders.models.TargetStatus"
)

# Security (docs/security.md) ------------------------------------------------------------------------------------
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
# How many reverse proxies append to X-Forwarded-For in front of Django (production: 1).
TRUSTED_PROXIES = envint("DJANGO_TRUSTED_PROXIES", 0, minimum=0)
REST_FRAMEWORK["NUM_PROXIES"] = TRUSTED_PROXIES
# /api/auth/token/ is also rate limited per client address (core.security.TokenLoginThrottle).
API_TOKEN_THROTTLE_RATE = envstr("API_TOKEN_THROTTLE_RATE", "10/min")

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
# Swagger UI from the drf-spectacular-sidecar package's static files, not from a CDN.
SPECTACULAR_SETTINGS["SWAGGER_UI_DIST"] = "SIDECAR"
SPECTACULAR_SETTINGS["SWAGGER_UI_FAVICON_HREF"] = "SIDECAR"
SPECTACULAR_SETTINGS["REDOC_DIST"] = "SIDECAR"
