from django.urls import reverse
from django.utils.functional import SimpleLazyObject

from core.roles import is_operator
from core.selectors import notification_latest_unread, notifications_unread_count


def navigation(request):
    context = {"flower_url": reverse("flower", args=[""])}
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        # Counted only when a page shows the bell.
        context["notifications_unread"] = SimpleLazyObject(notifications_unread_count)
        context["notifications_latest"] = SimpleLazyObject(notification_latest_unread)
        context["is_operator"] = is_operator(user)
    return context
