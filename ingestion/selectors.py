"""Reads of channels, topics, runs and skipped packages for pages and the API."""

from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.core.paginator import Page, Paginator
from django.db.models import Count, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone
from django_celery_beat.models import PeriodicTask

from accounts.models import AccountChat, AuthState, TelegramAccount
from core import task_names
from core.formatting import format_moment
from core.models import RunStatus
from core.sizes import size_text
from ingestion.models import (
    RUN_OUTCOME_FILTERS,
    AccountChannelMap,
    CatalogAudit,
    Channel,
    ChannelScan,
    IngestionRun,
    MapRole,
    SkippedPackage,
    SkipReason,
    StartPoint,
    TopicProgress,
)
from ingestion.rules import KINDS
from telegram.records import CHANNEL, SUPERGROUP, ChatRef

# Basic groups carry no archives worth watching; they are reminder targets.
SOURCE_CHAT_TYPES = (CHANNEL, SUPERGROUP)


def channel_list() -> QuerySet[Channel]:
    """Channels and supergroups: the destination first, then active sources, then by title."""
    skipped_counts = (
        SkippedPackage.objects.filter(channel=OuterRef("pk")).order_by().values("channel").annotate(n=Count("pk"))
    ).values("n")
    return (
        Channel.objects.filter(chat__type__in=SOURCE_CHAT_TYPES)
        .select_related("chat")
        .prefetch_related(
            Prefetch("maps", queryset=AccountChannelMap.objects.select_related("account").order_by("account__phone")),
            Prefetch(
                "chat__account_links",
                queryset=AccountChat.objects.select_related("account").order_by("account__phone"),
            ),
        )
        # A subquery, counted for the rows shown only: a join would group every channel's skipped rows first.
        .annotate(skipped_count=Coalesce(Subquery(skipped_counts), 0))
        .order_by("-is_destination", "-is_active", "chat__title")
    )


def channel_get(*, pk: int) -> Channel:
    """One channel as channel_list() has it; raises Channel.DoesNotExist."""
    return channel_list().get(pk=pk)


@dataclass(frozen=True)
class ChannelRow:
    """A channel with the accounts around it, as the Channels page shows it."""

    channel: Channel
    readers: list[TelegramAccount]
    writers: list[TelegramAccount]
    members_not_reading: list[TelegramAccount]
    posters: list[TelegramAccount]


def channel_row(channel: Channel) -> ChannelRow:
    """Expects channel_list()'s prefetches."""
    readers = [m.account for m in channel.maps.all() if m.role == MapRole.READER]
    writers = [m.account for m in channel.maps.all() if m.role == MapRole.WRITER]
    members = list(channel.chat.account_links.all())
    return ChannelRow(
        channel=channel,
        readers=readers,
        writers=writers,
        members_not_reading=[link.account for link in members if link.account not in readers],
        posters=[link.account for link in members if link.can_post],
    )


CHANNELS_PER_PAGE = 50


def channel_rows_page(*, page_number) -> Page:
    """One page of the Channels page's rows (an operator may be in a thousand chats)."""
    page = Paginator(channel_list(), CHANNELS_PER_PAGE).get_page(page_number)
    page.object_list = [channel_row(channel) for channel in page.object_list]
    return page


def channel_maps(*, channel: Channel) -> QuerySet[AccountChannelMap]:
    """Who reads or writes a channel, with how many topics each tracks."""
    return (
        AccountChannelMap.objects.filter(channel=channel)
        .select_related("account")
        .annotate(topic_count=Count("topics"))
        .order_by("role", "account__phone")
    )


def topic_list(*, channel: Channel | int | None = None) -> QuerySet[TopicProgress]:
    """Topic progress rows, one per reading account and forum topic."""
    topics = TopicProgress.objects.select_related("map__account", "map__channel__chat").order_by(
        "map__channel__chat__title", "topic_id", "map__account__phone"
    )
    if channel is not None:
        topics = topics.filter(map__channel=channel)
    return topics


def run_list(
    *, status: str = "", outcome: str = "", account: TelegramAccount | int | None = None
) -> QuerySet[IngestionRun]:
    runs = IngestionRun.objects.select_related("account").order_by("-created_at", "-pk")
    if status:
        runs = runs.filter(status=status)
    if outcome:
        runs = runs.filter(RUN_OUTCOME_FILTERS[outcome])
    if account is not None:
        runs = runs.filter(account=account)
    return runs


def run_outcome_counts() -> dict[str, int]:
    """How many runs came to each outcome (core.outcomes), in one query."""
    # aliased: an aggregate may not take the name of a field ("failed", "skipped")
    counts = IngestionRun.objects.aggregate(
        **{f"outcome_{key}": Count("pk", filter=where) for key, where in RUN_OUTCOME_FILTERS.items()}
    )
    return {key: counts[f"outcome_{key}"] for key in RUN_OUTCOME_FILTERS}


def run_get(*, pk: int) -> IngestionRun:
    return run_list().get(pk=pk)


def run_scans(*, run: IngestionRun) -> QuerySet[ChannelScan]:
    """What the run did with each channel, in the order it went."""
    return run.scans.select_related("channel__chat").order_by("scanned_at", "pk")


def run_packages(*, run: IngestionRun):
    """The packages this run uploaded first."""
    return run.packages.order_by("pk")


def run_skipped(*, run: IngestionRun) -> QuerySet[SkippedPackage]:
    """The skipped packages this run left (or tried again and left): its account's, touched while it ran."""
    rows = SkippedPackage.objects.select_related("channel__chat").filter(account=run.account_id)
    rows = rows.filter(updated_at__gte=run.claimed_at or run.created_at)
    if run.finished_at is not None:
        rows = rows.filter(updated_at__lte=run.finished_at)
    return rows.order_by("reason", "file_name")


def channel_scans(*, channel: Channel) -> QuerySet[ChannelScan]:
    """The channel's scan history, newest first."""
    return channel.scans.select_related("run__account").order_by("-scanned_at", "-pk")


def channel_open_run(*, channel: Channel) -> IngestionRun | None:
    """A queued or running run that reads this channel (for the channel page's Ingest now)."""
    return (
        run_list()
        .filter(
            Q(channel__isnull=True) | Q(channel=channel),
            status__in=[RunStatus.QUEUED, RunStatus.RUNNING],
            account__channel_maps__channel=channel,
            account__channel_maps__role=MapRole.READER,
        )
        .first()
    )


def next_cycle_at() -> datetime | None:
    """When beat next starts an ingestion cycle, from its schedule (CELERY_BEAT_SCHEDULE, kept by the
    DatabaseScheduler); None while beat has not started one yet."""
    task = PeriodicTask.objects.filter(task=task_names.INGESTION_CYCLE_START, enabled=True).first()
    if task is None or task.last_run_at is None:
        return None
    now = timezone.now()
    return max(now, now + task.schedule.remaining_estimate(task.last_run_at))


def accounts_that_ingest() -> QuerySet[TelegramAccount]:
    """Active, logged-in accounts that read at least one active channel: those "Ingest now" can start."""
    return (
        TelegramAccount.objects.filter(
            is_active=True,
            auth_state=AuthState.AUTHENTICATED,
            channel_maps__role=MapRole.READER,
            channel_maps__channel__is_active=True,
        )
        .distinct()
        .order_by("phone")
    )


def skipped_list(*, reason: str = "", channel: Channel | int | None = None) -> QuerySet[SkippedPackage]:
    """Skipped packages, newest failure first, with `topic_title` when the topic is known."""
    topic_title = TopicProgress.objects.filter(map__channel=OuterRef("channel"), topic_id=OuterRef("topic_id")).values(
        "title"
    )[:1]
    rows = (
        SkippedPackage.objects.select_related("channel__chat", "account")
        .annotate(topic_title=Subquery(topic_title))
        .order_by("-updated_at", "-pk")
    )
    if reason:
        rows = rows.filter(reason=reason)
    if channel is not None:
        rows = rows.filter(channel=channel)
    return rows


def skipped_reason_counts(*, channel: Channel | int | None = None) -> dict[str, int]:
    rows = SkippedPackage.objects.all()
    if channel is not None:
        rows = rows.filter(channel=channel)
    return dict(rows.values_list("reason").annotate(count=Count("pk")).order_by())


# -- what an ingestion cycle reads ---------------------------------------------------------------------------------


@dataclass
class Writer:
    """The account that uploads to the destination, and how it addresses it."""

    account: TelegramAccount
    ref: ChatRef
    destination_chat_id: int


def _ref(chat, access_hash: int) -> ChatRef:
    return ChatRef(id=chat.telegram_id, access_hash=access_hash, type=chat.type)


def reader_targets(
    *, account: TelegramAccount, channel_id: int | None = None
) -> list[tuple[AccountChannelMap, ChatRef]]:
    """The active channels this account reads (or that one channel), each with how this account addresses it."""
    maps = AccountChannelMap.objects.filter(account=account, role=MapRole.READER, channel__is_active=True)
    if channel_id is not None:
        maps = maps.filter(channel_id=channel_id)
    maps = list(maps.select_related("channel__chat").order_by("channel__chat__title"))
    hashes = dict(
        AccountChat.objects.filter(account=account, chat__in=[m.channel.chat for m in maps]).values_list(
            "chat_id", "access_hash"
        )
    )
    return [
        (channel_map, _ref(channel_map.channel.chat, hashes.get(channel_map.channel.chat_id, 0)))
        for channel_map in maps
    ]


def destination_writer(*, reader: TelegramAccount) -> Writer | None:
    """Who uploads for `reader`: itself when it writes to the destination (one client, one session), else
    another logged-in writer; None without a destination or a writer."""
    destination = Channel.objects.filter(is_destination=True).select_related("chat").first()
    if destination is None:
        return None
    writers = AccountChannelMap.objects.filter(
        channel=destination,
        role=MapRole.WRITER,
        account__is_active=True,
        account__auth_state=AuthState.AUTHENTICATED,
    ).select_related("account")
    chosen = next((m for m in writers if m.account_id == reader.pk), None) or writers.first()
    if chosen is None:
        return None
    link = AccountChat.objects.filter(account=chosen.account, chat=destination.chat).first()
    return Writer(
        account=chosen.account,
        ref=_ref(destination.chat, link.access_hash if link else 0),
        destination_chat_id=destination.chat_id,
    )


def map_topics(*, channel_map: AccountChannelMap) -> list[TopicProgress]:
    return list(TopicProgress.objects.filter(map=channel_map))


def topic_fetch_enabled(*, topic: TopicProgress) -> bool:
    return TopicProgress.objects.filter(pk=topic.pk, fetch_enabled=True).exists()


def skips_capped(*, channel: Channel, sets: dict[int, set[int]]) -> set[int]:
    """Of sets (first message id → all their message ids), those passed over after INGEST_MAX_SKIP_ATTEMPTS;
    a set that gained a volume since it was last tried is not passed over."""
    rows = SkippedPackage.objects.filter(
        channel=channel, message_id__in=list(sets), attempt_count__gte=settings.INGEST_MAX_SKIP_ATTEMPTS
    ).values_list("message_id", "message_ids")
    return {first for first, tried in rows if sets[first] <= set(tried)}


def channel_skips_passed_over(*, channel: Channel) -> int:
    """Sets of this channel tried INGEST_MAX_SKIP_ATTEMPTS times: cycles pass over them until Retry."""
    return SkippedPackage.objects.filter(channel=channel, attempt_count__gte=settings.INGEST_MAX_SKIP_ATTEMPTS).count()


def skips_open(*, channel: Channel, topic_id: int | None) -> list[SkippedPackage]:
    """Sets of this channel (and topic) still short of volumes."""
    return list(
        SkippedPackage.objects.filter(
            channel=channel,
            topic_id=topic_id,
            reason__in=[SkipReason.MISSING_PART, SkipReason.WAITING_FOR_VOLUMES],
        ).only("file_name", "message_ids")
    )


def catalog_audit_latest():
    """The last catalog audit, for the Operations page; None before the first."""
    return CatalogAudit.objects.first()


def channel_reader_ref(*, channel: Channel) -> tuple[TelegramAccount, ChatRef] | None:
    """A logged-in account that can read the channel (one of its readers first), with how it addresses it; None
    when no account can."""
    links = (
        AccountChat.objects.filter(
            chat=channel.chat, account__is_active=True, account__auth_state=AuthState.AUTHENTICATED
        )
        .select_related("account")
        .order_by("account__phone")
    )
    readers = set(
        AccountChannelMap.objects.filter(channel=channel, role=MapRole.READER).values_list("account_id", flat=True)
    )
    link = min(links, key=lambda link: link.account_id not in readers, default=None)
    if link is None:
        return None
    return link.account, _ref(channel.chat, link.access_hash)


def channel_rules_described(*, channel: Channel) -> list[tuple[str, str]]:
    """What the channel takes, in words, for whoever may only read it: (what, how) per rule."""
    kinds = ", ".join(label for kind, label in KINDS.items() if kind in channel.take_kinds) or "Every kind"
    low, high = size_text(channel.min_bytes), size_text(channel.max_bytes)
    sizes = f"{low or 'any'} to {high or 'any'}" if low or high else "Any size"
    start = StartPoint(channel.start_from).label
    if channel.start_from in (StartPoint.NOW, StartPoint.DATE) and channel.start_date:
        start += f" ({format_moment(channel.start_date)})"
    elif channel.start_from == StartPoint.MESSAGE:
        start += f" ({channel.start_message_link or channel.start_message_id})"
    return [
        ("Kinds taken", kinds),
        ("Sets of several volumes", "Taken" if channel.take_multi_volume else "Left out"),
        ("Extensions left out", ", ".join(f".{extension}" for extension in channel.leave_extensions) or "None"),
        ("Name pattern", channel.name_pattern or "Any name"),
        ("Size", sizes),
        ("Start", start),
    ]


def accounts_resting(*, account_ids: list[int]) -> list[str]:
    """Of these accounts, those resting now (accounts.pace), as "account (why)"."""
    resting = TelegramAccount.objects.filter(pk__in=account_ids, resting_until__gt=timezone.now())
    return [f"{account} ({account.rest_reason})" for account in resting]
