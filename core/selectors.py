"""Reads for the notification pages, the bell and the audit trail."""

import re
from datetime import datetime

from django.apps import apps
from django.db.models import BooleanField, ExpressionWrapper, Model, Q, QuerySet

from core.audit_words import kind_words
from core.models import AuditChange, AuditEntry, Notification


def notifications_unread_count() -> int:
    return Notification.objects.filter(read_at__isnull=True).count()


def notification_latest_unread() -> Notification | None:
    """What the browser announces when it is new (the bell carries it)."""
    return Notification.objects.filter(read_at__isnull=True).order_by("-last_raised_at", "-pk").first()


def notification_list(*, unread_only: bool = False) -> QuerySet[Notification]:
    """Newest first (by when they were last raised)."""
    notifications = Notification.objects.all()
    return notifications.filter(read_at__isnull=True) if unread_only else notifications


def notification_panel(*, limit: int) -> list[Notification]:
    """The bell's drop-down: unread first, then the most recently raised."""
    unread = ExpressionWrapper(Q(read_at__isnull=True), output_field=BooleanField())
    return list(Notification.objects.order_by(unread.desc(), "-last_raised_at", "-pk")[:limit])


def _kind_labels(kind: str) -> list[str]:
    """ "reminders.ReminderRun", "ReminderRun" or "reminder run" -> the labels it names."""
    wanted = kind.strip().lower()
    return [
        model._meta.label
        for model in apps.get_models()
        if wanted in (model._meta.label.lower(), model._meta.object_name.lower(), str(model._meta.verbose_name).lower())
    ]


def audit_entries(
    *,
    actor: str = "",
    kind: str = "",
    object_id: str = "",
    since: datetime | None = None,
    until: datetime | None = None,
) -> QuerySet[AuditEntry]:
    """The trail, newest first, narrowed by who (a person's login: their entries and their tokens'; or part of a
    token's name), by what kind of row it changed ("reminders.ReminderRun", "ReminderRun" or "reminder run") and
    which one, and by when."""
    entries = AuditEntry.objects.select_related("user").prefetch_related("changes")
    if actor:
        actor = actor.strip()
        entries = entries.filter(
            Q(actor__iexact=actor)
            | Q(actor__istartswith=f"{actor}'s token '")
            | Q(actor__iregex=rf"'s token '.*{re.escape(actor)}.*'$")
        )
    if kind or object_id:
        changes = AuditChange.objects.all()
        if kind:
            changes = changes.filter(kind__in=_kind_labels(kind))
        if object_id:
            changes = changes.filter(object_id=object_id)
        entries = entries.filter(pk__in=changes.values("entry_id"))
    if since:
        entries = entries.filter(at__gte=since)
    if until:
        entries = entries.filter(at__lt=until)
    return entries


def audit_kinds() -> list[tuple[str, str]]:
    """(label, words) of every kind of row the trail has changed, by their words."""
    labels = AuditChange.objects.order_by("kind").values_list("kind", flat=True).distinct()
    return sorted(((label, kind_words(label)) for label in labels), key=lambda kind: kind[1])


def audit_history(*, obj: Model, page_path: str = "", limit: int = 20) -> list[AuditEntry]:
    """What was done to one row: the entries that changed it, and the writes sent to its page's own routes
    (a cancel or a resume changes its row by a conditional UPDATE, which sends no model signal)."""
    changed = AuditChange.objects.filter(kind=obj._meta.label, object_id=str(obj.pk)).values("entry_id")
    about = Q(pk__in=changed)
    if page_path:
        about |= Q(path__startswith=page_path)
    return list(AuditEntry.objects.filter(about).prefetch_related("changes")[:limit])
