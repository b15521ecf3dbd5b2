"""Log lines name the Celery task they come from, and nothing stands in that place outside tasks; a request's
path is logged as its route (core.routes), never as sent, and a line that names an address keeps the address's
secret out (an invite link's, a download link's signature, a token)."""

import logging
import re
from urllib.parse import urlsplit

from celery import current_task
from gunicorn import glogging


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


class GunicornAccessLog(glogging.Logger):
    """gunicorn's access log (`--logger-class core.logging.GunicornAccessLog`): the request line, the path and the
    referrer name the route, never the path sent (an invite link, a signed download link); no query string, and
    no Authorization or Cookie header even if a format asks for them."""

    def atoms(self, resp, req, environ, request_time):
        from core.routes import path_shown

        atoms = super().atoms(resp, req, environ, request_time)
        route = path_shown(environ.get("PATH_INFO", ""))
        atoms["r"] = f"{environ['REQUEST_METHOD']} {route} {environ['SERVER_PROTOCOL']}"
        atoms["U"] = route
        atoms["q"] = ""
        referrer = environ.get("HTTP_REFERER")
        atoms["f"] = path_shown(urlsplit(referrer).path) if referrer else "-"
        for header in ("{authorization}i", "{cookie}i", "{referer}i", "{x-csrftoken}i"):
            atoms.pop(header, None)
        return atoms
