import os

from celery import Celery
from celery.signals import setup_logging

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")

app = Celery("stashcast")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@setup_logging.connect
def _use_django_logging(**kwargs):
    # Celery logs through Django's LOGGING, so task ids appear in every line.
    from logging.config import dictConfig

    from django.conf import settings

    dictConfig(settings.LOGGING)
