"""Django itself: the apps, the request pipeline, templates, language and time, logging."""

from config.env import envstr
from config.settings.environment import BASE_DIR

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
    # Before anything that may refuse a write: a refused one is recorded too (core/audit.py).
    "core.audit.AuditMiddleware",
    # Before CsrfViewMiddleware, the first to read a form: an oversized body gets an answer a person can use.
    "core.middleware.RequestBodyLimitMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # ETag and 304 on the API's detail reads.
    "core.api.etags.DetailETagMiddleware",
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

# A reminder may target thousands of groups, each a ticked box of one form.
DATA_UPLOAD_MAX_NUMBER_FIELDS = 20_000
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

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
    # Request paths are logged as their routes: a path may be a secret (core.routes); any other line naming a
    # secret address or a token has the secret hidden.
    "filters": {
        "routes_not_paths": {"()": "core.logging.RoutesNotPaths"},
        "secrets_in_addresses": {"()": "core.logging.SecretsInAddressesFilter"},
    },
    "handlers": {
        "console": {"class": "logging.StreamHandler", "formatter": "task", "filters": ["secrets_in_addresses"]}
    },
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
    "loggers": {
        # The loggers that name a request's address, for every handler (error reports too), not only the console.
        "django.request": {"filters": ["routes_not_paths", "secrets_in_addresses"]},
        "django.security.csrf": {"filters": ["secrets_in_addresses"]},
        # runserver's request lines (Django's own handler for them is replaced by ours).
        "django.server": {
            "handlers": ["console"],
            "filters": ["routes_not_paths", "secrets_in_addresses"],
            "propagate": False,
        },
        "django.db.backends": {"level": "INFO"},
        "telethon": {"level": "WARNING"},
    },
}
