"""Notifications: their page, the bell in the top bar and its panel, marking them read."""

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from core import notifications, selectors
from core.models import Notification

NOTIFICATIONS_PAGE = "core/notifications.html"
NOTIFICATIONS_PER_PAGE = 50
PANEL_SIZE = 8


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
