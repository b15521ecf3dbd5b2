"""Log lines name the Celery task they come from, and nothing stands in that place outside tasks; a line that
names an address keeps the address's secret out (an invite link's, a download link's signature, a token)."""

import logging
import re

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


HIDDEN = "[hidden]"
SECRET_PARAMETER = r"[^=&\s\"']*(?:token|key|secret|sig|password|code)[^=&\s\"']*"
# The addresses whose part is a secret (core/urls.py, packages/urls.py), a secret-like query parameter, a token.
SECRETS_IN_ADDRESSES = [
    (re.compile(r"(/invite/)[^/\s?\"']+"), rf"\g<1>{HIDDEN}"),
    (re.compile(r"(/packages/download/)[^/\s?\"']+"), rf"\g<1>{HIDDEN}"),
    (re.compile(rf"([?&]{SECRET_PARAMETER}=)[^&\s\"']+", re.I), rf"\g<1>{HIDDEN}"),
    (re.compile(r"\bsct_[\w-]+"), f"sct_{HIDDEN}"),
]


def secrets_hidden(text: str) -> str:
    for pattern, replacement in SECRETS_IN_ADDRESSES:
        text = pattern.sub(replacement, text)
    return text


class SecretsInAddressesFilter(logging.Filter):
    """On the loggers that name a request's address (django.request's "Not Found: /invite/…", an access log):
    the line is written out once, its secrets hidden, for every handler after it."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        hidden = secrets_hidden(message)
        if hidden != message:
            record.msg, record.args = hidden, None
        return True
