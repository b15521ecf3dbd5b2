"""Every API view makes the checks of core/access.py first, whatever it adds: the login, the person's
role and the token's scope. A view that named its own `permission_classes` once replaced them all, and a read token
could add operators; here no view can be left out, override how the checks are gathered, or relax them unnoticed.
"""

from django.urls import URLPattern, URLResolver, get_resolver
from rest_framework.views import APIView

from core.access import ANYONE, LOGGED_IN, OPERATORS, ScopeAndRole

# The only views that ask less, and why: (login_required, changes_by).
RELAXED = {
    # Logging in for a token: the password sent is the credential, whoever sends it.
    "core.security.ThrottledObtainAuthToken": (False, ANYONE),
    # The metrics: an operator's login or token, or the metrics' own bearer token (read-only).
    "operations.api.MetricsView": (False, OPERATORS),
    # Each person's own API tokens: a viewer makes and revokes read ones.
    "core.api.tokens.ApiTokenViewSet": (True, LOGGED_IN),
    # One file's link: viewers make them too when DOWNLOAD_LINKS_FOR_VIEWERS is on, as on the package's page.
    "packages.api.file_links.PackageFileLinkView": (True, LOGGED_IN),
}
# Third-party views, read-only: the OpenAPI schema, its docs page and the API's root.
THIRD_PARTY = ("drf_spectacular.", "rest_framework.")
CHANGES = ("post", "put", "patch", "delete")


def _views(patterns=None) -> set[type]:
    found = set()
    for entry in patterns if patterns is not None else get_resolver().url_patterns:
        if isinstance(entry, URLResolver):
            found |= _views(entry.url_patterns)
        elif isinstance(entry, URLPattern) and issubclass(getattr(entry.callback, "cls", object), APIView):
            found.add(entry.callback.cls)
    return found


def _name(view: type) -> str:
    return f"{view.__module__}.{view.__qualname__}"


VIEWS = _views()


def test_the_walk_finds_the_api():
    assert len(VIEWS) > 25
    assert {"core.api.people.PersonViewSet", "packages.api.packages.PackageViewSet"} <= {_name(view) for view in VIEWS}


def test_every_api_view_makes_the_checks_first():
    problems = []
    for view in VIEWS:
        if _name(view).startswith(THIRD_PARTY):
            if any(hasattr(view, method) for method in CHANGES):
                problems.append(f"{_name(view)}: a third-party view that takes changes")
            continue
        if not issubclass(view, ScopeAndRole) or view.__mro__[1] is not ScopeAndRole:
            problems.append(f"{_name(view)}: ScopeAndRole is not its first base")
        for method in ("get_permissions", "check_permissions", "initial"):
            defined_by = next(klass for klass in view.__mro__ if method in vars(klass))
            if defined_by not in (ScopeAndRole, APIView):
                problems.append(f"{_name(view)}: {defined_by.__qualname__} overrides {method}")
    assert not problems, "\n".join(problems)


def test_only_the_named_views_ask_less():
    asked = {
        _name(view): (view.login_required, view.changes_by)
        for view in VIEWS
        if issubclass(view, ScopeAndRole) and (view.login_required, view.changes_by) != (True, OPERATORS)
    }
    assert asked == RELAXED
