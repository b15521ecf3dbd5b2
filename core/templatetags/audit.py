from django import template
from django.template.loader import render_to_string

from core.audit_words import counted, kind_words
from core.selectors import audit_history as history_of

register = template.Library()


@register.simple_tag(takes_context=True)
def audit_history(context, obj) -> str:
    """{% audit_history obj %} on an object's own page: who changed it, and what they sent to that page's
    routes ("vera cancelled Flash sale run #12")."""
    request = context.get("request")
    page_path = request.path if request is not None else ""
    return render_to_string(
        "core/audit.html#history", {"history": history_of(obj=obj, page_path=page_path)}, request=request
    )


@register.filter
def audit_counted(entry) -> str:
    """The rows an entry changed, counted by kind: "120 packages created, 4 topic progresses changed"."""
    told = counted(list(entry.changes.all()))
    if entry.changes_left_out:
        told += f" (and {entry.changes_left_out} more rows)"
    return told


@register.filter
def audit_kind(label: str) -> str:
    return kind_words(label)


@register.filter
def audit_field(name: str) -> str:
    """ "chat_id" -> "chat", "is_active" -> "is active"."""
    return name.removesuffix("_id").replace("_", " ")
