"""Reads for the notification pages and the bell."""

from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet

from core.models import Notification


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
