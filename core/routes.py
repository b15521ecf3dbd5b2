"""A request's path as it may be stored or logged: its route, with the row ids kept and every other part named.

Some paths are secrets: an invite link (/invite/<secret>/) and a signed download link
(/packages/download/<signed>/<file>) open what they name to whoever holds them. Wherever a path is written down (the
audit trail, the logs), the route stands in for it: "/invite/:token/", "/reminders/activity/12/cancel/". Only
parts that are plain numbers (row ids) are kept; a query string is never kept.
"""

import re

from django.urls import NoReverseMatch, Resolver404, resolve, reverse

NO_ROUTE = "(no such page)"
_ROW_ID = re.compile(r"[0-9]{1,20}")
# A path in a log line: from a slash to the next space or quote.
_PATH_IN_TEXT = re.compile(r"(?<![\w.:/])/[^\s\"']*")


def _kept(name: str, value) -> str:
    return str(value) if _ROW_ID.fullmatch(str(value)) else f":{name}"


def path_shown(path: str) -> str:
    """'/invite/Xy…/' -> '/invite/:token/'; a path that names no route -> NO_ROUTE (it may be a mistyped link)."""
    path = path.split("?", 1)[0]
    try:
        match = resolve(path)
    except Resolver404:
        return NO_ROUTE
    kwargs = {name: _kept(name, value) for name, value in match.kwargs.items()}
    args = [_kept(f"part{index}", value) for index, value in enumerate(match.args, start=1)]
    try:
        return reverse(match.view_name, args=args or None, kwargs=kwargs or None)
    except NoReverseMatch:
        return f"({match.view_name or 'unnamed route'})"


def paths_shown_in(text: str) -> str:
    """Every path in a line of text (a log line) replaced by its route."""
    return _PATH_IN_TEXT.sub(lambda found: path_shown(found.group(0)), text)
