"""Reads of reminders, their runs and media for pages and the API."""

from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

from django.conf import settings
from django.db.models import Count, OuterRef, Prefetch, Q, QuerySet, Subquery
from django.utils import timezone

from accounts.models import AuthState, Chat, ChatTopic, TelegramAccount
from reminders.models import (
    IN_FLIGHT,
    RUN_OUTCOME_FILTERS,
    Audience,
    AudienceMember,
    MediaFile,
    Reminder,
    ReminderAudience,
    ReminderPart,
    ReminderRun,
    ReminderRunTarget,
    ReminderTarget,
    TargetStatus,
)
from reminders.schedule import CRONTAB_SEARCH_DAYS, crontab_fires_on, crontab_parse
from reminders.services import PartSpec, ReminderSpec, TargetSpec
from telegram.records import GROUP, SUPERGROUP


def reminder_list(*, account_id: int | None = None) -> QuerySet[Reminder]:
    reminders = Reminder.objects.select_related("account").prefetch_related(
        Prefetch("parts", queryset=ReminderPart.objects.select_related("media").order_by("order")),
        Prefetch("targets", queryset=ReminderTarget.objects.select_related("chat").order_by("pk")),
        Prefetch("audience_links", queryset=ReminderAudience.objects.order_by("pk")),
    )
    if account_id is not None:
        reminders = reminders.filter(account_id=account_id)
    return reminders.order_by("name", "pk")


def reminder_get(*, pk: int) -> Reminder:
    """One reminder with its parts and targets; raises Reminder.DoesNotExist."""
    return reminder_list().get(pk=pk)


def reminder_spec(*, reminder: Reminder) -> ReminderSpec:
    """What the reminder is now, to change a few fields with dataclasses.replace and pass to reminder_update."""
    parts = sorted(reminder.parts.all(), key=lambda part: part.order)
    albums = MediaFile.objects.in_bulk([media_id for part in parts for media_id in part.album])
    return ReminderSpec(
        account=reminder.account,
        name=reminder.name,
        timezone=reminder.timezone,
        window_start_hour=reminder.window_start_hour,
        window_end_hour=reminder.window_end_hour,
        parts=[
            PartSpec(
                text=part.text,
                media=part.media,
                caption=part.caption,
                format=part.format,
                album=[albums[media_id] for media_id in part.album if media_id in albums],
            )
            for part in parts
        ],
        targets=[TargetSpec(chat=target.chat, topic_id=target.topic_id) for target in reminder.targets.all()],
        schedule_crontab=reminder.schedule_crontab,
        schedule_at=reminder.schedule_at,
        enabled=reminder.enabled,
        auto_resume=reminder.auto_resume,
        silent=reminder.silent,
        link_preview=reminder.link_preview,
        pin=reminder.pin,
        replace_previous=reminder.replace_previous,
        edit_in_place=reminder.edit_in_place,
        audiences=[link.audience for link in reminder.audience_links.select_related("audience").order_by("pk")],
    )


def reminder_run_list(
    *, status: str | None = None, outcome: str = "", reminder_id: int | None = None, account_id: int | None = None
) -> QuerySet[ReminderRun]:
    runs = ReminderRun.objects.select_related("reminder", "account")
    if status:
        runs = runs.filter(status=status)
    if outcome:
        runs = runs.filter(RUN_OUTCOME_FILTERS[outcome])
    if reminder_id is not None:
        runs = runs.filter(reminder_id=reminder_id)
    if account_id is not None:
        runs = runs.filter(account_id=account_id)
    return runs.order_by("-created_at", "-pk")


def reminder_run_get(*, pk: int) -> ReminderRun:
    return reminder_run_list().get(pk=pk)


def reminder_run_targets(*, run_id: int, status: str | None = None) -> QuerySet[ReminderRunTarget]:
    """A run's groups, each with `topic_title` (its forum topic's title as last refreshed, else None)."""
    topic = ChatTopic.objects.filter(chat=OuterRef("chat"), topic_id=OuterRef("topic_id"))
    targets = (
        ReminderRunTarget.objects.filter(run_id=run_id)
        .select_related("chat")
        .annotate(topic_title=Subquery(topic.values("title")[:1]))
    )
    return targets.filter(status=status) if status else targets


def media_list() -> QuerySet[MediaFile]:
    return MediaFile.objects.order_by("-created_at", "-pk")


def account_observed_rate(*, account_id: int) -> float | None:
    """Messages a minute this account actually sent over its last runs (FloodWaits and slow mode
    included); None before its first run."""
    runs = list(
        ReminderRun.objects.filter(account_id=account_id, messages_sent__gt=0, active_seconds__gt=0)
        .exclude(status__in=IN_FLIGHT)
        .order_by("-finished_at", "-pk")
        .values_list("messages_sent", "active_seconds")[: settings.REMINDER_OBSERVED_RATE_RUNS]
    )
    if not runs:
        return None
    return round(sum(sent for sent, _ in runs) / sum(seconds for _, seconds in runs) * 60, 1)


# Pages ------------------------------------------------------------------------------------------------------------


def account_target_chats(*, account_id: int, include_ids: Iterable[int] = ()) -> QuerySet[Chat]:
    """The groups and supergroups an account can post in (what a reminder may target), by title; plus
    `include_ids` (a reminder's current groups), so an edit page still shows them."""
    postable = Q(
        account_links__account_id=account_id,
        account_links__can_post=True,
        type__in=[GROUP, SUPERGROUP],
    )
    return Chat.objects.filter(postable | Q(pk__in=list(include_ids))).distinct().order_by("title", "pk")


def default_sender() -> TelegramAccount | None:
    """The account the compose wizard starts with: a logged-in, switched-on one that can post in the most
    groups (the first one by name might be in none)."""
    postable = Q(
        chat_links__can_post=True,
        chat_links__chat__type__in=[GROUP, SUPERGROUP],
    )
    return (
        TelegramAccount.objects.filter(auth_state=AuthState.AUTHENTICATED, is_active=True)
        .annotate(groups=Count("chat_links", filter=postable))
        .order_by("-groups", "display_name", "phone")
        .first()
    )


def reminder_last_runs(*, reminder_ids: Iterable[int]) -> dict[int, ReminderRun]:
    """The newest run of each reminder, by reminder id (one query)."""
    runs = (
        ReminderRun.objects.filter(reminder_id__in=list(reminder_ids))
        .order_by("reminder_id", "-created_at", "-pk")
        .distinct("reminder_id")
    )
    return {run.reminder_id: run for run in runs}


def reminder_run_filter(
    *, statuses: Sequence[str] = (), outcome: str = "", reminder_id: int | None = None
) -> QuerySet[ReminderRun]:
    """Runs in any of `statuses` (all when empty) that came to `outcome` (any when empty), newest first."""
    runs = reminder_run_list(outcome=outcome, reminder_id=reminder_id)
    return runs.filter(status__in=statuses) if statuses else runs


def reminder_run_outcome_counts(*, reminder_id: int | None = None) -> dict[str, int]:
    """How many runs came to each outcome (core.outcomes), in one query."""
    runs = ReminderRun.objects.all()
    if reminder_id is not None:
        runs = runs.filter(reminder_id=reminder_id)
    # aliased: an aggregate may not take the name of a field ("failed", "skipped")
    counts = runs.aggregate(
        **{f"outcome_{key}": Count("pk", filter=where) for key, where in RUN_OUTCOME_FILTERS.items()}
    )
    return {key: counts[f"outcome_{key}"] for key in RUN_OUTCOME_FILTERS}


def reminder_next_fire_at(*, crontab: str, tz: ZoneInfo, after: datetime) -> datetime | None:
    """The first moment after `after` that the crontab fires in zone `tz` (as celery-beat reads it: day of
    month and weekday must both match); None when it never does within five years or the crontab is invalid."""
    try:
        spec = crontab_parse(crontab)
    except ValueError:
        return None
    start = after.astimezone(tz).date()
    for offset in range(CRONTAB_SEARCH_DAYS):
        day = start + timedelta(days=offset)
        if not crontab_fires_on(spec, day):
            continue
        for hour in sorted(spec.hour):
            for minute in sorted(spec.minute):
                moment = datetime.combine(day, time(hour, minute), tzinfo=tz).astimezone(UTC)
                if moment > after:
                    return moment
    return None


def account_find(*, pk: str) -> TelegramAccount | None:
    """The account a form names by id, or None."""
    return TelegramAccount.objects.filter(pk=pk).first() if pk.isdecimal() else None


def accounts_to_move_to(*, run: ReminderRun) -> list[TelegramAccount]:
    """Accounts that could take the run's pending groups: logged in, on, free to send, in every one of them."""
    chats = set(run.targets.filter(status=TargetStatus.PENDING).values_list("chat_id", flat=True))
    if not chats:
        return []
    candidates = (
        TelegramAccount.objects.filter(is_active=True, auth_state=AuthState.AUTHENTICATED, sending_stopped=False)
        .exclude(pk=run.account_id)
        .exclude(resting_until__gt=timezone.now())
        .annotate(in_groups=Count("chat_links", filter=Q(chat_links__chat_id__in=chats)))
        .filter(in_groups=len(chats))
    )
    return list(candidates.order_by("phone"))


REPORT_COLUMNS = (
    "group",
    "chat",
    "topic",
    "part",
    "status",
    "sent_at",
    "message_id",
    "album_message_ids",
    "previous_post",
    "error",
)


def reminder_run_report(*, run: ReminderRun) -> Iterator[dict]:
    """Every group of a run, one row per part, in the order they were fired: whether the part went out, when
    the group finished, the message it made (None when Telegram said it was sent before: its id is not known),
    an album's other messages, what Replace did with the previous run's post there (edited in place, or deleted
    and sent anew, and why not edited), and the group's error on the part it stopped at."""
    parts = len(run.parts)
    album_parts = [index for index, part in enumerate(run.parts) if part.get("album")]
    for target in reminder_run_targets(run_id=run.pk).order_by("pk").iterator(chunk_size=500):
        album_ids = list(target.album_ids)
        previous = target.get_previous_post_display() if target.previous_post else ""
        if target.previous_note:
            previous += f": {target.previous_note}"
        for index in range(parts):
            sent = index < target.parts_sent or target.status == TargetStatus.SENT
            message_id = target.message_ids[index] if index < len(target.message_ids) else None
            others = []
            if index in album_parts and message_id is not None:
                count = len(run.parts[index]["album"]) - 1
                others, album_ids = album_ids[:count], album_ids[count:]
            stopped_here = not sent and index == target.parts_sent
            yield {
                "group": target.chat.title,
                "chat": target.chat.telegram_id,
                "topic": target.topic_id,
                "part": index + 1,
                "status": TargetStatus.SENT.value if sent else target.status,
                "sent_at": target.finished_at if sent and target.status == TargetStatus.SENT else None,
                "message_id": message_id if sent else None,
                "album_message_ids": others,
                "previous_post": previous,
                "error": target.error if stopped_here else "",
            }


def audience_list(*, account: TelegramAccount | None = None) -> QuerySet[Audience]:
    """Audiences by name, with their groups and the reminders that target them."""
    audiences = Audience.objects.select_related("account").prefetch_related(
        Prefetch("members", queryset=AudienceMember.objects.select_related("chat").order_by("chat__title", "pk")),
        "reminder_links__reminder",
    )
    if account is not None:
        audiences = audiences.filter(account=account)
    return audiences.order_by("name", "pk")


def reminder_groups_count(*, targets: Iterable[tuple[int, int | None]], audiences: Sequence[Audience | int]) -> int:
    """How many groups (and topics) a reminder goes to: its own (chat pk, topic) and its audiences' members,
    each once (a run checks the audiences' when it is made, so it may send to fewer)."""
    keys = set(targets)
    if audiences:
        members = AudienceMember.objects.filter(audience__in=list(audiences)).values_list("chat_id", "topic_id")
        keys.update(members)
    return len(keys)
