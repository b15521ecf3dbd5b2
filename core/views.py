from django.conf import settings
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import defaults
from django.views.decorators.http import require_GET, require_POST

from core import notifications, selectors, tokens
from core.errors import OperatorError
from core.forms import ApiTokenForm, AuditFilterForm
from core.models import ApiToken, Notification
from core.roles import is_operator

NOTIFICATIONS_PAGE = "core/notifications.html"
NOTIFICATIONS_PER_PAGE = 50
PANEL_SIZE = 8


# Audit trail ------------------------------------------------------------------------------------------
# Viewers read it too (docs/decisions.md); the addresses are shown to operators only.

AUDIT_PAGE = "core/audit.html"
AUDIT_PER_PAGE = 50


@login_required
@require_GET
def audit_list(request):
    form = AuditFilterForm(request.GET or None)
    filters = form.cleaned_data if form.is_valid() else {}
    entries = selectors.audit_entries(**{name: value for name, value in filters.items() if value})
    page = Paginator(entries, AUDIT_PER_PAGE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "form": form,
        "page": page,
        "query": query.urlencode(),
        "kinds": selectors.audit_kinds(),
        "show_address": is_operator(request.user),
    }
    template = f"{AUDIT_PAGE}#audit-table" if request.htmx else AUDIT_PAGE
    return render(request, template, context)


# API tokens: each person manages their own; operators see everyone's and can revoke them ----------------

TOKENS_PAGE = "core/tokens.html"


def _token_form(request, data=None) -> ApiTokenForm:
    return ApiTokenForm(
        data,
        operator=is_operator(request.user),
        default_days=settings.API_TOKEN_DEFAULT_DAYS,
        max_days=settings.API_TOKEN_MAX_DAYS,
    )


def _tokens_answer(request, *, form: ApiTokenForm, made: ApiToken | None = None, secret: str = "", status: int = 200):
    context = {
        "form": form,
        "tokens": tokens.api_tokens_visible(user=request.user),
        "made": made,
        "secret": secret,
        "everyone": is_operator(request.user),
    }
    template = f"{TOKENS_PAGE}#tokens-body" if request.htmx else TOKENS_PAGE
    return render(request, template, context, status=status)


@login_required
@require_GET
def token_list(request):
    return _tokens_answer(request, form=_token_form(request))


@login_required
@require_POST
def token_create(request):
    """The secret is in this answer only: a page reload shows the list without it."""
    form = _token_form(request, request.POST)
    if not form.is_valid():
        return _tokens_answer(request, form=form, status=400)
    try:
        made, secret = tokens.api_token_create(owner=request.user, **form.cleaned_data)
    except ValidationError as exc:
        for field_name, messages_ in exc.message_dict.items():
            form.add_error(field_name if field_name in form.fields else None, messages_)
        return _tokens_answer(request, form=form, status=400)
    except OperatorError as exc:
        form.add_error(exc.field, exc.message)
        return _tokens_answer(request, form=form, status=403)
    return _tokens_answer(request, form=_token_form(request), made=made, secret=secret)


@login_required
@require_POST
def token_revoke(request, pk: int):
    token = tokens.api_token_revoke(token=get_object_or_404(tokens.api_tokens_visible(user=request.user), pk=pk))
    if not request.htmx:
        messages.success(request, f"Revoked {token}.")
        return redirect("tokens")
    return _tokens_answer(request, form=_token_form(request))


# Notifications ------------------------------------------------------------------------------------------


def _next_url(request, default: str) -> str:
    target = request.POST.get("next") or request.GET.get("next") or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return target
    return default


@login_required
def notification_list(request):
    unread_only = request.GET.get("unread") == "1"
    page = Paginator(selectors.notification_list(unread_only=unread_only), NOTIFICATIONS_PER_PAGE).get_page(
        request.GET.get("page")
    )
    return render(
        request,
        NOTIFICATIONS_PAGE,
        {"page": page, "unread_only": unread_only, "notifications_unread": selectors.notifications_unread_count()},
    )


@login_required
@require_GET
def notification_bell(request):
    """The unread count in the navigation; polled every 30 s."""
    context = {
        "notifications_unread": selectors.notifications_unread_count(),
        "notifications_latest": selectors.notification_latest_unread(),
    }
    return render(request, f"{NOTIFICATIONS_PAGE}#bell-count", context)


@login_required
@require_GET
def notification_panel(request):
    """The bell's drop-down: the latest notifications, unread first."""
    return _panel_response(request)


@login_required
@require_POST
def notification_read(request, pk: int):
    notification = notifications.notification_mark_read(notification=get_object_or_404(Notification, pk=pk))
    if not request.htmx:
        return redirect(_next_url(request, "notifications"))
    # The item in its read state, and the bell's new count out of band.
    item = render_to_string(f"{NOTIFICATIONS_PAGE}#notification-item", {"notification": notification}, request)
    count = render_to_string(
        f"{NOTIFICATIONS_PAGE}#bell-count",
        {"notifications_unread": selectors.notifications_unread_count(), "oob_count": True},
        request,
    )
    return HttpResponse(item + count)


@login_required
@require_POST
def notifications_read_all(request):
    notifications.notifications_mark_all_read()
    if not request.htmx:
        return redirect(_next_url(request, "notifications"))
    return _panel_response(request)


def _panel_response(request):
    return render(
        request,
        f"{NOTIFICATIONS_PAGE}#bell-panel",
        {
            "panel_items": selectors.notification_panel(limit=PANEL_SIZE),
            "notifications_unread": selectors.notifications_unread_count(),
            "oob_count": True,
        },
    )


# Error pages (settings.DEBUG off): the API answers JSON with a message, like its views do; a person gets the
# console's own page, with its navigation and a way back ------------------------------------------------------

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


class LogoutView(auth_views.LogoutView):
    """Log out, and say so on the login page that follows."""

    def post(self, request, *args, **kwargs):
        response = super().post(request, *args, **kwargs)
        messages.info(request, "You are logged out.")
        return response
