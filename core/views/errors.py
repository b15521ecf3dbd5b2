"""Error pages (settings.DEBUG off): the API answers JSON with a message, like its views do; a person gets the
console's own page, with its navigation and a way back."""

from django.http import JsonResponse
from django.shortcuts import render
from django.views import defaults

ERROR_PAGE = "core/error.html"


def _error(request, *, status: int, title: str, message: str, api_message: str | None = None):
    if request.path.startswith("/api/"):
        return JsonResponse({"message": api_message or message}, status=status)
    context = {"status": status, "title": title, "message": message}
    return render(request, ERROR_PAGE, context, status=status)


def bad_request(request, exception):
    return _error(
        request,
        status=400,
        title="This request cannot be read",
        message="The address or the form sent was not understood. Go back, reload the page and try again.",
        api_message="The request cannot be read.",
    )


def permission_denied(request, exception):
    return _error(
        request,
        status=403,
        title="Not allowed",
        message=str(exception) or "Your login may not open this page; ask an operator if you need it.",
    )


def not_found(request, exception):
    return _error(
        request,
        status=404,
        title="Nothing here",
        message="This page does not exist, or what it showed was deleted.",
        api_message="Nothing here; the API's addresses are listed at /api/docs/.",
    )


def server_error(request):
    try:
        return _error(
            request,
            status=500,
            title="Stashcast failed to answer",
            message="The error was logged for whoever runs this console. Reload the page to try again.",
            api_message="Stashcast failed to answer; the error was logged.",
        )
    except Exception:  # the page itself needs the database; when that is what failed, Django's plain page
        return defaults.server_error(request)
