"""Log lines name the Celery task they come from, and nothing stands in that place outside tasks."""

import logging

from celery import current_task


class TaskFormatter(logging.Formatter):
    """`%(task)s` is "[task.name task-id] " inside a task and empty elsewhere (web, beat, commands)."""

    def __init__(self, fmt: str | None = None, **kwargs):
        kwargs.pop("use_color", None)  # the option Celery's own formatter takes
        super().__init__(fmt, **kwargs)

    def format(self, record: logging.LogRecord) -> str:
        task = current_task
        task_id = getattr(getattr(task, "request", None), "id", None) if task else None
        record.task = f"[{task.name} {task_id}] " if task_id else ""
        return super().format(record)


def _no_secret(value):
    from core.routes import paths_shown_in  # URL resolving needs Django set up: only when a line is written

    return paths_shown_in(value) if isinstance(value, str) else value


class RoutesNotPaths(logging.Filter):
    """On the loggers that write request paths (django.request, django.server): each path becomes its route, so
    an invite link's secret or a signed download link is never in a log ("Gone: /invite/:token/")."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = _no_secret(record.msg)
        if isinstance(record.args, dict):
            record.args = {name: _no_secret(value) for name, value in record.args.items()}
        elif record.args:
            record.args = tuple(_no_secret(value) for value in record.args)
        return True
