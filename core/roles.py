"""Two roles: operators change things, viewers look.

An operator is a superuser or a member of the "Operators" group; every other
logged-in user is a viewer. Viewers get read-only pages and GET API; anything
else they send is refused here, in one place, before any view runs.
"""

import functools
import re

from django.http import JsonResponse
from django.shortcuts import render
from rest_framework.permissions import SAFE_METHODS, BasePermission

OPERATORS_GROUP = "Operators"
VIEWER_MESSAGE = "Viewers can look but not change anything; ask an operator to do this."
# A viewer may still log out (and log in as someone else), and manage their own read tokens (core.tokens).
ALWAYS_ALLOWED = ("/logout/", "/login/", "/tokens/", "/api/tokens/")
# Writes whose view decides about viewers itself: a link to one file of a package, as the package page's Get
# (DOWNLOAD_LINKS_FOR_VIEWERS; packages/api/file_links.py).
VIEW_DECIDES = re.compile(r"^/api/packages/[0-9]+/files/[0-9]+/link/$")


def is_operator(user) -> bool:
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    cached = getattr(user, "_is_operator", None)
    if cached is None:
        cached = user.groups.filter(name=OPERATORS_GROUP).exists()
        user._is_operator = cached
    return cached


class ViewerReadOnlyMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        user = getattr(request, "user", None)
        if (
            request.method not in SAFE_METHODS
            and user is not None
            and user.is_authenticated
            and not is_operator(user)
            and not request.path.startswith(ALWAYS_ALLOWED)
            and not VIEW_DECIDES.match(request.path)
        ):
            if request.path.startswith("/api/"):
                return JsonResponse({"message": VIEWER_MESSAGE}, status=403)
            return render(request, "core/forbidden.html", {"message": VIEWER_MESSAGE}, status=403)
        return self.get_response(request)


class IsOperatorOrReadOnly(BasePermission):
    """For the API, where token logins never pass through the middleware's session user."""

    message = VIEWER_MESSAGE

    def has_permission(self, request, view):
        return request.method in SAFE_METHODS or is_operator(request.user)


class IsOperator(BasePermission):
    """Operators only, whatever the method (the metrics: docs/security.md)."""

    message = "Only operators may read this; ask an operator, or use the metrics token."

    def has_permission(self, request, view):
        return is_operator(request.user)


def operator_required(message: str):
    """A page for operators only, even to look (People): viewers get the 403 page with `message`."""

    def decorate(view):
        @functools.wraps(view)
        def guarded(request, *args, **kwargs):
            if not is_operator(request.user):
                return render(request, "core/forbidden.html", {"message": message}, status=403)
            return view(request, *args, **kwargs)

        return guarded

    return decorate
