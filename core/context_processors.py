from django.conf import settings
from django.utils.functional import SimpleLazyObject

from core.selectors import notifications_unread_count


def navigation(request):
    context = {"flower_url": settings.FLOWER_URL}
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        # Counted only when a page shows the bell.
        context["notifications_unread"] = SimpleLazyObject(notifications_unread_count)
    return context
