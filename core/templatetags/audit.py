from django import template
from django.template.loader import render_to_string

from core.selectors import audit_history as history_of

register = template.Library()


@register.simple_tag(takes_context=True)
def audit_history(context, obj) -> str:
    """{% audit_history obj %} on an object's own page: who changed it, and what they sent to that page's
    routes ("cancelled by vera at 14:02")."""
    request = context.get("request")
    page_path = request.path if request is not None else ""
    return render_to_string(
        "core/audit.html#history", {"history": history_of(obj=obj, page_path=page_path)}, request=request
    )
