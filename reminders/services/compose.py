"""Reminders and their schedules: the specs they are made from, their media, create / edit / delete, and
their django-celery-beat PeriodicTask."""

import hashlib
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files import File
from django.db import IntegrityError, transaction
from django_celery_beat.models import ClockedSchedule, CrontabSchedule, PeriodicTask

from accounts.models import AccountChat, Chat, TelegramAccount
from accounts.selectors import chat_topics
from core import clock, task_names
from core.errors import item_error
from core.models import RunStatus
from reminders.media_types import AUDIO, DOCUMENT, PHOTO, VIDEO, media_fits_account, media_type
from reminders.models import (
    IN_FLIGHT,
    RESUMABLE,
    WAITING,
    Audience,
    MediaFile,
    Reminder,
    ReminderAudience,
    ReminderPart,
    ReminderRun,
    ReminderRunTarget,
    ReminderTarget,
    TargetStatus,
)
from reminders.schedule import (
    HORIZON_TEXT,
    DeliveryWindow,
    crontab_fields,
    crontab_parse,
    window_hours_errors,
    within_horizon,
    zone,
)
from reminders.services.runs import REMINDER_DELETED, ReminderStateError, reminder_run_counts_refresh
from reminders.services.summaries import summary_waiting
from telegram.formatting import PLAIN, FormatError, FormattedText, text_format
from telegram.records import ALBUM_MAX, GENERAL_TOPIC_ID, TOPIC_ID_MAX

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class PartSpec:
    text: str = ""
    media: MediaFile | None = None
    caption: str = ""
    format: str = PLAIN  # how text or caption is written (telegram.formatting.FORMATS)
    album: Sequence[MediaFile] = ()  # 2–10 media sent as one album with `caption`, instead of `media`


@dataclass(frozen=True)
class TargetSpec:
    chat: Chat
    topic_id: int | None = None


@dataclass(frozen=True)
class ReminderSpec:
    """Everything a reminder is; create and update take a whole one (see selectors.reminder_spec)."""

    account: TelegramAccount
    name: str
    timezone: str
    window_start_hour: int
    window_end_hour: int
    parts: Sequence[PartSpec]
    targets: Sequence[TargetSpec]
    schedule_crontab: str = ""
    schedule_at: datetime | None = None
    enabled: bool = True
    auto_resume: bool = False
    silent: bool = False
    link_preview: bool = True
    pin: bool = False
    replace_previous: bool = False
    edit_in_place: bool = False
    # Saved lists of the account's groups it also goes to (their members checked when a run is made).
    audiences: Sequence[Audience] = ()


# Media ----------------------------------------------------------------------------------------------------------


def media_create(*, file: File, name: str = "") -> MediaFile:
    """Store an uploaded file once per content: the same bytes uploaded again return the existing MediaFile.

    Its type comes from its bytes (reminders.media_types), whatever its name or the browser says."""
    name = (name or file.name or "media").rsplit("/", 1)[-1][:255]
    digest, size = hashlib.sha256(), 0
    for chunk in file.chunks():
        digest.update(chunk)
        size += len(chunk)
    if size == 0:
        raise ValidationError({"file": "The file is empty."})
    file_type = media_type(file=file, name=name, size=size)
    sha256 = digest.hexdigest()
    existing = MediaFile.objects.filter(sha256=sha256).first()
    if existing is not None:
        return existing
    media = MediaFile(name=name, size=size, kind=file_type.kind, mime_type=file_type.mime_type, sha256=sha256)
    file.seek(0)
    media.file.save(name, file, save=False)
    try:
        with transaction.atomic():
            media.save()
    except IntegrityError:
        # The same bytes were stored concurrently: keep theirs. In an object store both may have written the
        # same key, which is then theirs too.
        theirs = MediaFile.objects.get(sha256=sha256)
        if theirs.file.name != media.file.name:
            media.file.delete(save=False)
        return theirs
    return media


def media_purge_unused(*, now: datetime | None = None) -> int:
    """Delete media no reminder uses, a day after upload (an abandoned compose wizard's files); media that
    a stopped run still has to send stays until the run is over. Returns how many were deleted."""
    now = now or clock.now()
    cutoff = now - timedelta(hours=settings.MEDIA_UNUSED_KEEP_HOURS)
    open_runs = ReminderRun.objects.open()
    needed = {
        media_id
        for parts in open_runs.values_list("parts", flat=True)
        for part in parts
        for media_id in [part["media"], *part.get("album", [])]
        if media_id
    }
    needed |= {media_id for album in ReminderPart.objects.values_list("album", flat=True) for media_id in album}
    unused = MediaFile.objects.filter(created_at__lt=cutoff, parts__isnull=True).exclude(pk__in=needed)
    deleted = 0
    for media in unused:
        media.file.delete(save=False)
        media.delete()
        deleted += 1
    if deleted:
        logger.info("Deleted %s media that no reminder used for %s hours.", deleted, settings.MEDIA_UNUSED_KEEP_HOURS)
    return deleted


# Reminders ------------------------------------------------------------------------------------------------------


def _validate(spec: ReminderSpec, *, current: Reminder | None) -> None:
    errors: dict[str, list[str | ValidationError]] = {}

    def error(name: str, message: str | ValidationError) -> None:
        errors.setdefault(name, []).append(message)

    if not spec.name.strip():
        error("name", "Give the reminder a name.")
    tz = None
    try:
        tz = zone(spec.timezone)
    except ValueError as exc:
        error("timezone", str(exc))
    hours_errors = window_hours_errors(spec.window_start_hour, spec.window_end_hour)
    for name, message in hours_errors.items():
        error(name, message)
    # only read once the hours hold
    window = DeliveryWindow(tz=tz, start_hour=spec.window_start_hour, end_hour=spec.window_end_hour)
    if spec.schedule_crontab and spec.schedule_at is not None:
        error("schedule", "Give a crontab or a one-off time, not both.")
    elif spec.schedule_crontab:
        try:
            hours = crontab_parse(spec.schedule_crontab).hour
        except ValueError as exc:
            error("schedule", str(exc))
        else:
            if not hours_errors and not window.fires_inside(hours):
                error("schedule", f"The crontab never fires inside the delivery window {window.text}.")
    elif spec.schedule_at is not None and (current is None or spec.schedule_at != current.schedule_at):
        if spec.schedule_at.tzinfo is None:
            error("schedule", "The one-off time needs a UTC offset, e.g. 2026-12-01T09:00:00+08:00.")
        elif spec.schedule_at <= clock.now():
            error("schedule", "The one-off time has already passed.")
        elif not within_horizon(spec.schedule_at, clock.now()):
            error("schedule", f"The one-off time is more than {HORIZON_TEXT} ahead; check the year.")
        elif tz is not None and not hours_errors and window.containing(spec.schedule_at) is None:
            error(
                "schedule",
                f"{window.local_hm(spec.schedule_at)} ({spec.timezone}) is outside the delivery window {window.text}.",
            )
    _validate_parts(spec.parts, error, spec.account)
    _validate_targets(spec, error)
    if errors:
        raise ValidationError(errors)


def part_format_problem(*, part: PartSpec, account: TelegramAccount | None = None) -> str:
    """Why Telegram would refuse the part's text or caption as written (its place in the text), or ''."""
    try:
        part_formatted(part=part, premium=bool(account and account.is_premium))
    except FormatError as exc:
        return str(exc)
    return ""


def part_formatted(*, part: PartSpec, premium: bool = False) -> FormattedText:
    """The part's text (or caption) as Telegram takes it: text and entities. Raises FormatError."""
    if part.media is None and not part.album:
        return text_format(part.text, format=part.format, premium=premium)
    return text_format(part.caption, format=part.format, caption=True, premium=premium)


def _validate_parts(parts: Sequence[PartSpec], error, account: TelegramAccount | None = None) -> None:
    if not parts:
        error("parts", "A reminder needs at least one part (a text, or a media with an optional caption).")
    for index, part in enumerate(parts):
        if part.album:
            problem = _album_problem(part)
            if problem:
                error("parts", item_error("parts", index, problem))
        elif part.media is None and not part.text.strip():
            error("parts", item_error("parts", index, "give a text or a media."))
        elif part.media is not None and part.text:
            error("parts", item_error("parts", index, "a media part carries a caption, not a text."))
        elif part.media is None and part.caption:
            error("parts", item_error("parts", index, "a caption needs a media."))
        problem = part_format_problem(part=part, account=account)
        if problem:
            error("parts", item_error("parts", index, problem))
        for media in [part.media, *part.album] if account is not None else []:
            too_large = media and media_fits_account(size=media.size, upload_limit_bytes=account.upload_limit_bytes)
            if too_large:
                error("parts", item_error("parts", index, f"{too_large}."))


def _album_problem(part: PartSpec) -> str:
    """Telegram's album rules: 2–10 media, photos and videos together, or files only, or audio only."""
    if part.media is not None or part.text:
        return "an album carries a caption, not a text or another media."
    if not 2 <= len(part.album) <= ALBUM_MAX:
        return f"an album has 2 to {ALBUM_MAX} pictures or files; this one has {len(part.album)}."
    kinds = {media.kind for media in part.album}
    if not (kinds <= {PHOTO, VIDEO} or kinds == {DOCUMENT} or kinds == {AUDIO}):
        return "an album is photos and videos, or files only, or audio only: put the others in a part of their own."
    return ""


def _validate_targets(spec: ReminderSpec, error) -> None:
    for audience in spec.audiences:
        if audience.account_id != spec.account.pk:
            error("audiences", f"“{audience}” lists {audience.account}'s groups, not {spec.account}'s.")
    if not spec.targets and not spec.audiences:
        error("targets", "Pick at least one group or audience.")
        return
    links = {
        link.chat_id: link
        for link in AccountChat.objects.filter(account=spec.account, chat__in=[target.chat for target in spec.targets])
    }
    topics = chat_topics(chat_ids=[target.chat.pk for target in spec.targets if target.topic_id is not None])
    seen = set()
    for index, target in enumerate(spec.targets):
        chat = target.chat
        key = (chat.pk, target.topic_id)
        if key in seen:
            error("targets", item_error("targets", index, f"“{chat.title}” is listed twice."))
        seen.add(key)
        link = links.get(chat.pk)
        if chat.is_person:
            # a private chat is for Send to Telegram; reminders go to groups
            error("targets", item_error("targets", index, f"“{chat.title}” is a person, not a group; pick a group."))
        elif link is None:
            error(
                "targets",
                item_error(
                    "targets",
                    index,
                    f"{spec.account} is not in “{chat.title}” ({chat.telegram_id}); refresh its chats.",
                ),
            )
        elif not link.can_post:
            error(
                "targets",
                item_error("targets", index, f"{spec.account} cannot post in “{chat.title}” ({chat.telegram_id})."),
            )
        if target.topic_id is not None and not chat.is_forum:
            error("targets", item_error("targets", index, f"“{chat.title}” is not a forum; leave the topic empty."))
        elif target.topic_id is not None and not 1 <= target.topic_id <= TOPIC_ID_MAX:
            error("targets", item_error("targets", index, f"a topic id is a number from 1 to {TOPIC_ID_MAX}."))
        elif target.topic_id not in (None, GENERAL_TOPIC_ID) and target.topic_id not in {
            topic.topic_id for topic in topics.get(chat.pk, [])
        }:
            # a topic Telegram does not know fails every send with TOPIC_DELETED: refuse it now
            error(
                "targets",
                item_error(
                    "targets",
                    index,
                    f"“{chat.title}” has no topic {target.topic_id}; pick one of its topics "
                    "(refresh the account's chats if it was just created).",
                ),
            )


def _schedule_of(reminder: Reminder) -> tuple:
    return (reminder.schedule_crontab, reminder.schedule_at, reminder.timezone, reminder.enabled)


def _save(reminder: Reminder, spec: ReminderSpec) -> Reminder:
    schedule_before = _schedule_of(reminder) if reminder.pk else None
    reminder.account = spec.account
    reminder.name = spec.name.strip()
    reminder.timezone = spec.timezone
    reminder.window_start_hour = spec.window_start_hour
    reminder.window_end_hour = spec.window_end_hour
    reminder.schedule_crontab = " ".join(spec.schedule_crontab.split())
    reminder.schedule_at = spec.schedule_at
    reminder.enabled = spec.enabled
    reminder.auto_resume = spec.auto_resume
    reminder.silent = spec.silent
    reminder.link_preview = spec.link_preview
    reminder.pin = spec.pin
    reminder.replace_previous = spec.replace_previous
    reminder.edit_in_place = spec.edit_in_place
    reminder.updated_at = clock.now()
    if _schedule_of(reminder) != schedule_before:
        reminder.schedule_since = reminder.updated_at
    reminder.save()
    reminder.parts.all().delete()
    ReminderPart.objects.bulk_create(
        ReminderPart(
            reminder=reminder,
            order=order,
            text=part.text,
            media=part.media,
            caption=part.caption,
            format=part.format,
            album=[media.pk for media in part.album],
        )
        for order, part in enumerate(spec.parts)
    )
    reminder.targets.all().delete()
    ReminderTarget.objects.bulk_create(
        ReminderTarget(reminder=reminder, chat=target.chat, topic_id=target.topic_id) for target in spec.targets
    )
    reminder.audience_links.all().delete()
    ReminderAudience.objects.bulk_create(
        ReminderAudience(reminder=reminder, audience=audience) for audience in dict.fromkeys(spec.audiences)
    )
    reminder_schedule_sync(reminder=reminder)
    # a run waiting for the window waits for the window as it is now: its summary says when that opens
    now = clock.now()
    for run in reminder.runs.filter(status=WAITING):
        run.error_summary = summary_waiting(reminder=reminder, fired_at=run.fired_at, now=now)
        run.save(update_fields=["error_summary"])
    return reminder


@transaction.atomic
def reminder_create(*, spec: ReminderSpec) -> Reminder:
    _validate(spec, current=None)
    return _save(Reminder(), spec)


@transaction.atomic
def reminder_update(*, reminder: Reminder, spec: ReminderSpec) -> Reminder:
    """Replace everything the reminder is; runs already fired keep the parts they were fired with."""
    _validate(spec, current=reminder)
    return _save(reminder, spec)


@transaction.atomic
def reminder_delete(*, reminder: Reminder) -> None:
    """The reminder and its schedule go (a database trigger drops the PeriodicTask, however a reminder is
    deleted); its runs stay as history, under the name they were fired with. Groups a stopped run still
    had pending are skipped: without the reminder there is no window to resume in."""
    busy = reminder.runs.filter(status__in=IN_FLIGHT).first()
    if busy is not None:
        raise ReminderStateError(f"Run #{busy.pk} of “{reminder}” is {busy.outcome.label.lower()}; cancel it first.")
    now = clock.now()
    stopped = list(reminder.runs.filter(status__in=[*RESUMABLE, WAITING], pending__gt=0))
    ReminderRunTarget.objects.filter(run__in=stopped, status__in=[TargetStatus.PENDING, TargetStatus.SENDING]).update(
        status=TargetStatus.SKIPPED, error=REMINDER_DELETED, finished_at=now
    )
    for run in stopped:
        reminder_run_counts_refresh(run=run)
        if run.status in (RunStatus.PAUSED, WAITING):
            ReminderRun.objects.filter(pk=run.pk).update(status=RunStatus.PARTIAL, finished_at=now)
    reminder.delete()


def reminder_schedule_sync(*, reminder: Reminder) -> PeriodicTask | None:
    """Keep the reminder's django-celery-beat PeriodicTask in step with its schedule and `enabled`."""
    task = reminder.periodic_task
    if not reminder.schedule_crontab and reminder.schedule_at is None:
        if task is not None:
            reminder.periodic_task = None
            reminder.save(update_fields=["periodic_task"])
            task.delete()
        return None
    if task is None:
        task = PeriodicTask(name=f"reminder-{reminder.pk}", task=task_names.REMINDER_FIRE)
    if reminder.schedule_crontab:
        task.crontab, _ = CrontabSchedule.objects.get_or_create(
            **crontab_fields(reminder.schedule_crontab), timezone=zone(reminder.timezone)
        )
        task.clocked, task.one_off, enabled = None, False, reminder.enabled
    else:
        task.clocked, _ = ClockedSchedule.objects.get_or_create(clocked_time=reminder.schedule_at)
        # a one-off time that has passed must not fire again when the reminder is edited
        task.crontab, task.one_off = None, True
        enabled = reminder.enabled and reminder.schedule_at > clock.now()
    task.args = json.dumps([reminder.pk])
    task.enabled = enabled
    task.description = f"Reminder “{reminder.name}” ({reminder.timezone})"
    task.save()
    if reminder.periodic_task_id != task.pk:
        reminder.periodic_task = task
        reminder.save(update_fields=["periodic_task"])
    return task


def reminder_validate(*, spec: ReminderSpec, current: Reminder | None = None) -> None:
    """The checks of reminder_create / reminder_update without saving: the compose wizard checks each
    step before the next. Raises ValidationError keyed by field, as they do."""
    _validate(spec, current=current)
