"""Channels, their readers and writers, the destination, and which chats are channels at all."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from accounts.models import AccountChat, Chat, TelegramAccount
from ingestion.models import (
    CHANNEL_SETS_PER_CYCLE_MAX,
    AccountChannelMap,
    Channel,
    MapRole,
    StartPoint,
    TopicProgress,
)
from ingestion.scanning import scan_state_reset
from packages import services as package_services
from packages.models import RAW_FILE_MAX_RETENTION_DAYS


def channel_for_chat(*, chat: Chat) -> Channel:
    channel, _ = Channel.objects.get_or_create(chat=chat)
    return channel


def channel_update(
    *,
    channel: Channel,
    is_active: bool | None = None,
    category: str | None = None,
    expiration_days: int | None | type(...) = ...,
    sets_per_cycle: int | None | type(...) = ...,
) -> Channel:
    """sets_per_cycle: the channel's share of a cycle (None: INGEST_CHANNEL_SETS_PER_CYCLE); ... leaves a field."""
    if sets_per_cycle not in (..., None) and not 1 <= sets_per_cycle <= CHANNEL_SETS_PER_CYCLE_MAX:
        raise ValidationError(
            {
                "sets_per_cycle": f"A channel takes 1 to {CHANNEL_SETS_PER_CYCLE_MAX} sets a cycle before the others "
                f"have their turn; leave it empty for the default ({settings.INGEST_CHANNEL_SETS_PER_CYCLE})."
            }
        )
    if expiration_days is not ... and expiration_days is not None and expiration_days < 0:
        raise ValidationError(
            {"expiration_days": "Use empty (keep raw files), 0 (keep 3 hours) or a positive number of days."}
        )
    if expiration_days is not ... and expiration_days is not None and expiration_days > RAW_FILE_MAX_RETENTION_DAYS:
        raise ValidationError(
            {
                "expiration_days": f"Keep raw files at most {RAW_FILE_MAX_RETENTION_DAYS} days; "
                "leave it empty to keep them for good."
            }
        )
    if channel.is_destination and is_active:
        raise ValidationError({"is_active": "The destination channel cannot also be a source."})
    if is_active and not channel.is_active and channel.start_from == StartPoint.NOW and not _ever_scanned(channel):
        # "From now" is from the moment it is switched on, not from when its row was made.
        channel.start_date = timezone.now()
    if is_active is not None:
        channel.is_active = is_active
    old_category = channel.category
    if category is not None:
        channel.category = category.strip()
    if expiration_days is not ...:
        channel.expiration_days = expiration_days
    if sets_per_cycle is not ...:
        channel.sets_per_cycle = sets_per_cycle
    with transaction.atomic():
        channel.save()
        # The category is the tag of the channel's packages: a new one is re-applied to those already in.
        package_services.packages_category_retag(chat_id=channel.chat_id, old=old_category, new=channel.category)
    return channel


def _ever_scanned(channel: Channel) -> bool:
    return AccountChannelMap.objects.filter(channel=channel, last_scanned_at__isnull=False).exists()


def channel_link_account(
    *, channel: Channel, account: TelegramAccount, role: str = MapRole.READER
) -> AccountChannelMap:
    """Let an account read (or write) a channel it is a member of."""
    if not AccountChat.objects.filter(account=account, chat=channel.chat).exists():
        raise ValidationError(
            {"account": f"{account} is not in {channel.title}; refresh its chats or join the channel first."}
        )
    channel_map, created = AccountChannelMap.objects.get_or_create(
        account=account, channel=channel, defaults={"role": role}
    )
    if not created and channel_map.role != role:
        channel_map.role = role
        channel_map.save(update_fields=["role"])
    return channel_map


def channel_unlink_account(*, channel: Channel, account: TelegramAccount) -> None:
    AccountChannelMap.objects.filter(channel=channel, account=account).delete()


def destination_set(*, channel: Channel, writers: list[TelegramAccount] | None = None) -> Channel:
    """Make this channel the one destination; its writers are the accounts that can post there."""
    with transaction.atomic():
        Channel.objects.filter(is_destination=True).exclude(pk=channel.pk).update(is_destination=False)
        channel.is_destination = True
        channel.is_active = False
        channel.save(update_fields=["is_destination", "is_active"])
        chosen = (
            writers
            if writers is not None
            else [link.account for link in AccountChat.objects.filter(chat=channel.chat, can_post=True)]
        )
        for account in chosen:
            link = AccountChat.objects.filter(account=account, chat=channel.chat).first()
            if link is None or not link.can_post:
                raise ValidationError({"writers": f"{account} cannot post in {channel.title}."})
            channel_link_account(channel=channel, account=account, role=MapRole.WRITER)
    return channel


def destination_get() -> Channel | None:
    return Channel.objects.select_related("chat").filter(is_destination=True).first()


def topic_set_fetch(*, topic: TopicProgress, fetch_enabled: bool) -> TopicProgress:
    topic.fetch_enabled = fetch_enabled
    topic.save(update_fields=["fetch_enabled"])
    if fetch_enabled:
        # Its watermark may lag the channel's: the next cycle scans from there.
        scan_state_reset(channel_id=topic.map.channel_id, below=topic.last_processed_message_id)
    return topic


def channels_apply_roles(*, roles: dict[int, str]) -> None:
    """Set up sources and the destination as an operator would.

    A `source` is activated and read by every account in it, from its whole history (what a world file's
    posts are there for); the `destination` is written by every account that can post there.
    """
    channels_for_known_chats()
    for telegram_id, role in roles.items():
        chat = Chat.objects.filter(telegram_id=telegram_id).first()
        if chat is None:
            continue
        channel = channel_for_chat(chat=chat)
        if role == "source":
            Channel.objects.filter(pk=channel.pk).update(start_from=StartPoint.HISTORY)
            channel.start_from = StartPoint.HISTORY
            channel_update(channel=channel, is_active=True)
            for link in AccountChat.objects.filter(chat=chat).select_related("account"):
                channel_link_account(channel=channel, account=link.account, role=MapRole.READER)
        elif role == "destination":
            destination_set(channel=channel)


def channels_for_known_chats() -> None:
    """A Channel row for every channel or supergroup an account is in, so the operator can set each up.

    Run when an account's chats are stored (accounts.signals.chats_refreshed) and when roles are applied;
    pages and the API only read."""
    from ingestion.selectors import SOURCE_CHAT_TYPES

    chats = Chat.objects.filter(
        type__in=SOURCE_CHAT_TYPES, account_links__isnull=False, channel__isnull=True
    ).distinct()
    Channel.objects.bulk_create([Channel(chat=chat) for chat in chats], ignore_conflicts=True)
