from django import template
from django.template.loader import render_to_string
from django.utils.dateparse import parse_datetime
from django.utils.formats import date_format
from django.utils.timezone import is_aware, localtime

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
    """The rows an entry changed, counted by kind: "1 package changed, 2 collections created"."""
    listed = list(entry.changes.all())
    if entry.via in ("task", "command"):  # its summary counts them already
        return f"The rows ({len(listed) + entry.changes_left_out})"
    told = counted(listed)
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


@register.filter
def audit_value(value) -> str:
    """A value as written in the trail; a moment as the pages show moments, with its zone."""
    if value is None:
        return "—"
    if isinstance(value, str) and len(value) >= 19 and value[4] == "-" and value[10] in " T":
        moment = parse_datetime(value)
        if moment is not None:
            return date_format(localtime(moment) if is_aware(moment) else moment, "j M Y, H:i:s T")
    return str(value)
