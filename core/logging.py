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
