"""A request whose body is too large to read is answered before any view sees it.

Django refuses a form or JSON body above DATA_UPLOAD_MAX_MEMORY_SIZE (uploaded files do not count) with
RequestDataTooBig, which it turns into a bare 400 page. Here the API gets a JSON 413 with a message, and a
page gets the message inside the form that was sent, the form left as typed (HTMX), or a page that says
to go back to it.
"""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import render
from django.utils.html import format_html
from django.utils.http import url_has_allowed_host_and_scheme

from core.sizes import size_text

FORM_TYPES = ("multipart/form-data", "application/x-www-form-urlencoded")
TOO_LARGE = 413


def _too_large_message(request: HttpRequest) -> str:
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    size = int(request.META.get("CONTENT_LENGTH") or 0)
    sent = f"{size_text(size)} were sent" if size else "more was sent"
    return (
        f"What was sent is too large to read: at most {size_text(limit)} of text (uploaded files aside), "
        f"and {sent}. A Telegram message is at most 4,096 characters: shorten the text, or upload a long "
        "text as a file."
    )


def _body_refused(request: HttpRequest) -> tuple[int, str] | None:
    """(status, message) when Django would refuse to read this body; None when it reads fine."""
    if request.method not in ("POST", "PUT", "PATCH", "DELETE"):
        return None
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if request.content_type not in FORM_TYPES:
        size = int(request.META.get("CONTENT_LENGTH") or 0)
        return (TOO_LARGE, _too_large_message(request)) if limit is not None and size > limit else None
    try:
        request.POST  # noqa: B018 -- parsing is what raises; CsrfViewMiddleware would parse it next anyway
    except RequestDataTooBig:
        return TOO_LARGE, _too_large_message(request)
    except MultiPartParserError as exc:
        return 400, f"The form cannot be read ({exc}). Send multipart/form-data with its boundary, or JSON."
    except (TooManyFieldsSent, TooManyFilesSent):
        return 400, (
            f"The form has too many fields (at most {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS}) or files "
            f"(at most {settings.DATA_UPLOAD_MAX_NUMBER_FILES}); send fewer at a time."
        )
    return None


class RequestBodyLimitMiddleware:
    """Before CsrfViewMiddleware, which is the first to read a form's body."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        refused = _body_refused(request)
        if refused is None:
            return self.get_response(request)
        status, message = refused
        if request.path.startswith("/api/"):
            return JsonResponse({"message": message}, status=status)
        if request.headers.get("HX-Request") == "true":
            # static/js/app.js puts this at the top of the form that was sent; the form keeps its fields.
            response = HttpResponse(
                format_html('<div class="alert alert--error request-error" role="alert">{}</div>', message),
                status=status,
            )
            response["X-Request-Refused"] = "true"
            return response
        back = request.headers.get("Referer", "")
        if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
            back = ""
        return render(request, "core/request_refused.html", {"message": message, "back": back}, status=status)
