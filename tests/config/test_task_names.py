"""Task names come from one registry (core.task_names), and each is a task Celery knows."""

from django.conf import settings

from config.celery_app import app
from core import task_names

APPS = {"core", "accounts", "ingestion", "packages", "reminders", "operations"}


def celery_task_names() -> set[str]:
    app.loader.import_default_modules()  # autodiscovery: every app's tasks module
    return set(app.tasks)


def test_every_registered_name_is_a_task_celery_knows():
    unknown = sorted(task_names.ALL - celery_task_names())
    assert not unknown, f"core/task_names.py names tasks Celery does not have (renamed or moved?): {unknown}"


def test_every_task_of_the_project_has_its_name_in_the_registry():
    ours = {name for name in celery_task_names() if name.split(".", 1)[0] in APPS}
    missing = sorted(ours - task_names.ALL)
    assert not missing, f"add these to core/task_names.py: {missing}"


def test_the_beat_schedule_and_the_queue_routes_name_registered_tasks():
    scheduled = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    routed = set(settings.CELERY_TASK_ROUTES)
    assert scheduled | routed <= task_names.ALL, sorted((scheduled | routed) - task_names.ALL)
