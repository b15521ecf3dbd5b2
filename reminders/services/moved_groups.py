"""A basic group upgraded to a supergroup: its chat row is linked to the supergroup, and reminders follow it.

Telegram gives the supergroup a new id and deactivates the old group (posting there is refused), so a reminder
still aimed at the group would fail on every run. The fan-out learns of it from a refused send and asks the
gateway where the group went; this module writes what it found, once.
"""

import logging

from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from accounts.models import AccountChat, Chat, TelegramAccount
from core.notifications import notification_raise
from reminders.models import ReminderRunTarget, ReminderTarget, TargetStatus
from telegram.records import ChatInfo

logger = logging.getLogger(__name__)

GROUP_MIGRATED = "reminder_group_migrated"


def chat_migration_follow(*, account: TelegramAccount, chat: Chat, to: ChatInfo) -> Chat:
    """Link `chat` to the supergroup it became, move every reminder's target and every unsent run target there
    (a reminder already aimed at both keeps one), and tell the operator the first time."""
    now = timezone.now()
    with transaction.atomic():
        chat = Chat.objects.select_for_update().get(pk=chat.pk)
        supergroup, _ = Chat.objects.update_or_create(
            telegram_id=to.id,
            defaults={
                "title": to.title,
                "type": to.type,
                "is_forum": to.forum,
                "slow_mode_seconds": to.slow_mode_seconds,
                "updated_at": now,
            },
        )
        AccountChat.objects.update_or_create(
            account=account,
            chat=supergroup,
            defaults={"access_hash": to.access_hash, "can_post": to.can_post, "seen_at": now},
        )
        first = chat.migrated_to_id is None
        chat.migrated_to = supergroup
        chat.save(update_fields=["migrated_to"])
        for target in ReminderTarget.objects.filter(chat=chat):
            if ReminderTarget.objects.filter(reminder=target.reminder_id, chat=supergroup, topic_id=None).exists():
                target.delete()
            else:
                ReminderTarget.objects.filter(pk=target.pk).update(chat=supergroup, topic_id=None)
        ReminderRunTarget.objects.filter(chat=chat, status__in=[TargetStatus.PENDING, TargetStatus.SENDING]).update(
            chat=supergroup, topic_id=None
        )
    if first:
        logger.warning("“%s” was upgraded to the supergroup “%s” (%s); reminders follow it", chat, supergroup, to.id)
        notification_raise(
            type=GROUP_MIGRATED,
            severity="info",
            title=f"“{chat.title}” became a supergroup",
            message=(
                f"Telegram upgraded the group “{chat.title}” to the supergroup “{supergroup.title}”. "
                "Its reminders now go to the supergroup; nothing else to do."
            ),
            subject=f"chat:{chat.pk}",
            url=reverse("reminders:list"),
        )
    return supergroup
