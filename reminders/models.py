from django.contrib.postgres.fields import ArrayField
from django.core.validators import MaxValueValidator
from django.db import models
from django.db.models import F, Q
from django.utils.timezone import now

from accounts.models import Chat, TelegramAccount
from core.models import IN_FLIGHT, ClaimableRun, RunStatus
from core.outcomes import Outcome, RunOutcome, first_sentence
from telegram.formatting import HTML, MARKDOWN, PLAIN
from telegram.records import ALBUM_MAX, TOPIC_ID_MAX

# Telegram's message ids, and so forum topic ids, are 32-bit.


class MediaFile(models.Model):
    """A picture or file for reminder parts, kept through Django's storage (local disk or S3)."""

    file = models.FileField(upload_to="reminders/media/%Y/%m/")
    name = models.CharField(max_length=255)
    size = models.PositiveBigIntegerField()
    # By content (reminders.media_types): a photo is sent as a picture, anything else as a file.
    kind = models.CharField(max_length=10, default="document")
    mime_type = models.CharField(max_length=100)
    sha256 = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=now)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return self.name


class Reminder(models.Model):
    """Ordered parts sent by one account to many groups, on a schedule, inside a daily delivery window."""

    # An account with reminders is switched off, not deleted (accounts.services.account_delete).
    account = models.ForeignKey(TelegramAccount, on_delete=models.PROTECT, related_name="reminders")
    name = models.CharField(max_length=200)
    timezone = models.CharField(max_length=64, help_text="IANA name, e.g. Asia/Kuala_Lumpur.")
    # At most one of the two; neither means manual sends only.
    schedule_crontab = models.CharField(max_length=120, blank=True, help_text="Five fields, in the reminder's zone.")
    schedule_at = models.DateTimeField(null=True, blank=True, help_text="One send at this moment.")
    window_start_hour = models.PositiveSmallIntegerField(default=9, validators=[MaxValueValidator(23)])
    window_end_hour = models.PositiveSmallIntegerField(default=18, validators=[MaxValueValidator(24)])
    enabled = models.BooleanField(default=True)
    auto_resume = models.BooleanField(default=False, help_text="Resume a paused run when the window next opens.")
    # How each post arrives (a run keeps them as fired: ReminderRun.options)
    silent = models.BooleanField(default=False, help_text="Members get no notification.")
    link_preview = models.BooleanField(default=True, help_text="Telegram shows a preview of the first link.")
    pin = models.BooleanField(default=False, help_text="Pin the post in each group, unpinning the previous run's.")
    replace_previous = models.BooleanField(default=False, help_text="Delete the previous run's post in each group.")
    edit_in_place = models.BooleanField(
        default=False, help_text="Replacing, edit the previous post in place where the parts allow (else delete it)."
    )
    # When the schedule (crontab, one-off time, zone, on/off) last changed: slots due before it belonged to the
    # old schedule, and neither a late fire nor the catch-up serves them (services.slots).
    schedule_since = models.DateTimeField(default=now)
    periodic_task = models.OneToOneField(
        "django_celery_beat.PeriodicTask", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=now)
    updated_at = models.DateTimeField(default=now)

    class Meta:
        ordering = ["name"]
        constraints = [
            # start > end runs overnight; 0–24 is all day; the same hour twice is neither (schedule.DeliveryWindow)
            models.CheckConstraint(
                condition=Q(window_start_hour__lte=23, window_end_hour__gte=1, window_end_hour__lte=24)
                & ~Q(window_start_hour=F("window_end_hour")),
                name="reminder_window_hours",
            ),
            models.CheckConstraint(
                condition=Q(schedule_crontab="") | Q(schedule_at__isnull=True), name="reminder_one_schedule"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class PartFormat(models.TextChoices):
    PLAIN = PLAIN, "Plain text"
    MARKDOWN = MARKDOWN, "Markdown"
    HTML = HTML, "HTML"


class ReminderPart(models.Model):
    """A text message, or a media (or an album of 2–10) with an optional caption."""

    reminder = models.ForeignKey(Reminder, on_delete=models.CASCADE, related_name="parts")
    order = models.PositiveSmallIntegerField()
    text = models.TextField(blank=True)
    media = models.ForeignKey(MediaFile, null=True, blank=True, on_delete=models.PROTECT, related_name="parts")
    caption = models.TextField(blank=True)
    # How the text or caption is written (telegram.formatting): Telegram gets it as text plus entities.
    format = models.CharField(max_length=10, choices=PartFormat.choices, default=PartFormat.PLAIN)
    # An album instead of one media: 2–10 MediaFile ids, in order, sent as one album with `caption`.
    album = ArrayField(models.BigIntegerField(), default=list, blank=True)

    class Meta:
        ordering = ["reminder", "order"]
        constraints = [
            models.UniqueConstraint(fields=["reminder", "order"], name="unique_reminder_part_order"),
            models.CheckConstraint(
                condition=(Q(media__isnull=True) & ~Q(text="") & Q(caption="") & Q(album=[]))
                | (Q(media__isnull=False) & Q(text="") & Q(album=[]))
                | (Q(media__isnull=True) & Q(text="") & Q(album__len__gte=2) & Q(album__len__lte=ALBUM_MAX)),
                name="reminder_part_text_media_or_album",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.reminder} #{self.order}"


class ReminderTarget(models.Model):
    """A group the reminder goes to; in a forum, optionally one topic (None = General)."""

    reminder = models.ForeignKey(Reminder, on_delete=models.CASCADE, related_name="targets")
    chat = models.ForeignKey(Chat, on_delete=models.PROTECT, related_name="+")
    topic_id = models.PositiveIntegerField(null=True, blank=True, validators=[MaxValueValidator(TOPIC_ID_MAX)])

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["reminder", "chat", "topic_id"], name="unique_reminder_target", nulls_distinct=False
            )
        ]

    def __str__(self) -> str:
        return f"{self.chat}" + (f" / topic {self.topic_id}" if self.topic_id else "")


class AudienceKind(models.TextChoices):
    FILTER = "filter", "Built by filters"
    LIST = "list", "Imported list"


class Audience(models.Model):
    """A named, saved list of one account's groups (with topics) that reminders target. Built by filters over
    the account's chats (kept, to check members against when a run is made and to build the list again) or
    imported from a CSV; either way the list is what a run sends to."""

    account = models.ForeignKey(TelegramAccount, on_delete=models.PROTECT, related_name="audiences")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=10, choices=AudienceKind.choices, default=AudienceKind.FILTER)
    # The filters (kind FILTER): blank or None matches anything.
    title_contains = models.CharField(max_length=200, blank=True)
    min_members = models.PositiveIntegerField(null=True, blank=True)
    max_members = models.PositiveIntegerField(null=True, blank=True)
    chat_type = models.CharField(max_length=20, blank=True, help_text="group or supergroup; blank for both.")
    forum = models.BooleanField(null=True, blank=True, help_text="Forums only (yes), none (no), or both.")
    created_at = models.DateTimeField(default=now)
    updated_at = models.DateTimeField(default=now)

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["account", "name"], name="unique_audience_name")]

    def __str__(self) -> str:
        return self.name


class AudienceMember(models.Model):
    """A group of an audience; in a forum, optionally one topic (None = General)."""

    audience = models.ForeignKey(Audience, on_delete=models.CASCADE, related_name="members")
    chat = models.ForeignKey(Chat, on_delete=models.PROTECT, related_name="+")
    topic_id = models.PositiveIntegerField(null=True, blank=True, validators=[MaxValueValidator(TOPIC_ID_MAX)])

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["audience", "chat", "topic_id"], name="unique_audience_member", nulls_distinct=False
            )
        ]

    def __str__(self) -> str:
        return f"{self.chat}" + (f" / topic {self.topic_id}" if self.topic_id else "")


class ReminderAudience(models.Model):
    """A reminder targets an audience: one in use is not deleted (services.audience_delete names the reminders)."""

    reminder = models.ForeignKey(Reminder, on_delete=models.CASCADE, related_name="audience_links")
    audience = models.ForeignKey(Audience, on_delete=models.PROTECT, related_name="reminder_links")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["reminder", "audience"], name="unique_reminder_audience")]

    def __str__(self) -> str:
        return f"{self.reminder} → {self.audience}"


class RunTrigger(models.TextChoices):
    SCHEDULE = "schedule", "Schedule"
    MANUAL = "manual", "Send now"


# A reminder run's own state, beside core's RunStatus: fired outside its delivery window, it waits for the
# window to open and then is queued by itself (reminder_runs_auto_resume); no worker holds it meanwhile.
WAITING = "waiting"
REMINDER_RUN_STATUSES = [*RunStatus.choices[:1], (WAITING, "Waiting for window"), *RunStatus.choices[1:]]


class PauseCause(models.TextChoices):
    """Why a paused run paused: what may resume it by itself (a rest ending), and what the pages say."""

    WINDOW = "window", "Delivery window closed"
    OPERATOR = "operator", "Paused by the operator"
    ACCOUNT_REST = "account_rest", "Account resting"
    SENDING_STOPPED = "sending_stopped", "Sending stopped for the account"
    ERRORS = "errors", "Too many groups failed"
    # Redis (the shared send budget) did not answer: resumes by itself once it does (services.runs).
    OUTAGE = "outage", "Paused by an outage"
    # A failed run standing for a schedule slot nothing served before its window closed (services.slots).
    MISSED = "missed", "Slot missed"


# Run-state rules, in one place: which run states each operator action takes. Services enforce them; pages
# and the API show them (can_resume, can_cancel, can_retry_failed).
LIVE = (WAITING, *IN_FLIGHT)  # pages keep polling these: they change without the operator
RESUMABLE = (RunStatus.PAUSED, RunStatus.FAILED)  # with groups still pending
CANCELABLE = (*LIVE, RunStatus.PAUSED, RunStatus.FAILED)  # a failed run only with groups still pending
RETRYABLE = (RunStatus.PAUSED, RunStatus.PARTIAL, RunStatus.FAILED)  # with failed groups
PAUSABLE = IN_FLIGHT  # a running run stops within a second, whatever it waits for
MOVABLE = RESUMABLE  # with groups still pending
NEEDS_OPERATOR = (RunStatus.PAUSED, RunStatus.PARTIAL, RunStatus.FAILED)  # raises a notification
ACTIVE = (*LIVE, RunStatus.PAUSED)  # Send now offers this run instead of starting a second one


# ReminderRun.outcome as filters, for Activity's pills (tests/reminders/test_outcomes.py keeps them agreeing).
_DID_NOTHING = Q(status=RunStatus.FAILED, sent=0, failed=0)
RUN_OUTCOME_FILTERS = {
    Outcome.WAITING: Q(status__in=[WAITING, RunStatus.QUEUED]),
    Outcome.RUNNING: Q(status=RunStatus.RUNNING),
    Outcome.PAUSED: Q(status=RunStatus.PAUSED),
    Outcome.SUCCESS: Q(status=RunStatus.SUCCESS),
    Outcome.PARTIAL: Q(status=RunStatus.PARTIAL, failed__gt=0),
    Outcome.CANCELED: Q(status=RunStatus.PARTIAL, failed=0),
    Outcome.FAILED: Q(status=RunStatus.FAILED) & ~_DID_NOTHING,
    Outcome.IDLE: _DID_NOTHING,
}


class ReminderRunQuerySet(models.QuerySet):
    def open(self) -> "ReminderRunQuerySet":
        """Runs that still have groups to send: the ones can_cancel holds for."""
        return self.filter(Q(status__in=[*LIVE, RunStatus.PAUSED]) | Q(status=RunStatus.FAILED, pending__gt=0))


class ReminderRun(ClaimableRun):
    """One firing of a reminder: its parts as they were then, and one ReminderRunTarget per group."""

    status = models.CharField(max_length=16, choices=REMINDER_RUN_STATUSES, default=RunStatus.QUEUED, db_index=True)

    # Runs are history: they outlive their reminder (null once it is deleted), named as it was when fired.
    reminder = models.ForeignKey(Reminder, null=True, blank=True, on_delete=models.SET_NULL, related_name="runs")
    reminder_name = models.CharField(max_length=200, blank=True)
    account = models.ForeignKey(TelegramAccount, on_delete=models.PROTECT, related_name="reminder_runs")
    trigger = models.CharField(max_length=16, choices=RunTrigger.choices, default=RunTrigger.MANUAL)
    # The schedule's due time this run serves (a crontab minute or the one-off time); None for Send now.
    # Unique per reminder: a restarted or second beat, or a redelivered fire task, finds the run and stops.
    slot = models.DateTimeField(null=True, blank=True)
    # [{"text", "media", "caption", "format", "album"}, ...] in order: a resumed run sends what was fired, even if
    # edited since (no "format": plain, no "album": none; fired before either existed).
    parts = models.JSONField(default=list)
    total = models.PositiveIntegerField(default=0)
    sent = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    pending = models.PositiveIntegerField(default=0)
    messages_sent = models.PositiveIntegerField(default=0, help_text="Parts delivered, for the observed rate.")
    active_seconds = models.FloatField(default=0, help_text="Time spent sending, summed over resumes.")
    fired_at = models.DateTimeField(default=now)
    # The end of the window it sends in; None while it waits, and in an all-day window (it never closes).
    window_end_at = models.DateTimeField(null=True, blank=True)
    error_summary = models.TextField(blank=True)
    pause_cause = models.CharField(max_length=16, choices=PauseCause.choices, blank=True)
    # {"silent", "link_preview", "pin", "replace_previous", "edit_in_place"} as the reminder had them when fired
    # ({}: all off, link previews on; fired before they existed).
    options = models.JSONField(default=dict, blank=True)
    # A run made of another run's pending groups, handed to another account (reminder_run_move).
    moved_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="moved_to")

    objects = ReminderRunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["account", "status"], name="reminder_run_account_status")]
        constraints = [
            models.UniqueConstraint(
                fields=["reminder", "slot"], condition=Q(slot__isnull=False), name="unique_reminder_run_slot"
            )
        ]

    live_statuses = LIVE  # waiting for its window too

    def __str__(self) -> str:
        return f"{self.reminder_name} run #{self.pk}"

    @property
    def zone_name(self) -> str:
        """The zone its times are shown in: its reminder's, UTC once the reminder is deleted (runs are history)."""
        return self.reminder.timezone if self.reminder_id else "UTC"

    @property
    def outcome(self) -> RunOutcome:
        """What the run came to (core.outcomes). Ended by the operator (Cancel, Move pending groups, the reminder
        deleted) with no group failed: canceled, however much it had sent. Failed before any group got it or
        failed (a missed slot, the window closed first): it did nothing."""
        if self.status == WAITING:
            return RunOutcome(Outcome.WAITING, "for the delivery window")
        if self.status == RunStatus.QUEUED:
            return RunOutcome(Outcome.WAITING, "for a worker, or for this account's other run")
        if self.status == RunStatus.RUNNING:
            return RunOutcome(Outcome.RUNNING)
        if self.status == RunStatus.PAUSED:
            return RunOutcome(Outcome.PAUSED, self.get_pause_cause_display() if self.pause_cause else "")
        delivered = f"{self.sent} of {self.total} groups delivered"
        if self.status == RunStatus.SUCCESS:
            return RunOutcome(Outcome.SUCCESS, delivered)
        if self.status == RunStatus.PARTIAL:
            if self.failed:
                return RunOutcome(Outcome.PARTIAL, f"{delivered}, {self.failed} failed")
            return RunOutcome(Outcome.CANCELED, delivered)
        if not self.sent and not self.failed:
            why = self.get_pause_cause_display() if self.pause_cause else first_sentence(self.error_summary)
            return RunOutcome(Outcome.IDLE, why or "no group was delivered")
        return RunOutcome(Outcome.FAILED, first_sentence(self.error_summary) or delivered)

    @property
    def can_resume(self) -> bool:
        return self.reminder_id is not None and self.status in RESUMABLE and self.pending > 0

    @property
    def can_cancel(self) -> bool:
        return self.status in CANCELABLE and (self.status != RunStatus.FAILED or self.pending > 0)

    @property
    def can_pause(self) -> bool:
        return self.status in PAUSABLE

    @property
    def can_move(self) -> bool:
        return self.reminder_id is not None and self.status in MOVABLE and self.pending > 0

    @property
    def can_retry_failed(self) -> bool:
        return self.reminder_id is not None and self.status in RETRYABLE and self.failed > 0


class TargetStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    SENDING = "sending", "Sending"
    SENT = "sent", "Sent"
    FAILED = "failed", "Failed"
    SKIPPED = "skipped", "Skipped"


class PreviousPost(models.TextChoices):
    """What Replace did with the previous run's post in a group."""

    EDITED = "edited", "Edited in place"
    DELETED = "deleted", "Deleted, sent anew"
    NONE = "none", "None to replace"


class ReminderRunTarget(models.Model):
    run = models.ForeignKey(ReminderRun, on_delete=models.CASCADE, related_name="targets")
    chat = models.ForeignKey(Chat, on_delete=models.PROTECT, related_name="+")
    topic_id = models.PositiveIntegerField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=TargetStatus.choices, default=TargetStatus.PENDING)
    # One per part, chosen when the run is fired: a send retried after a crash reuses it,
    # and Telegram answers RANDOM_ID_DUPLICATE instead of posting twice.
    random_ids = ArrayField(models.BigIntegerField())
    # Parts delivered so far, in order, written after each one goes out: a resumed target goes on
    # at its next part, even after Telegram has forgotten the random_ids of the first ones.
    parts_sent = models.PositiveSmallIntegerField(default=0)
    # The messages each part made, in order (an album's first item); None where Telegram answered
    # RANDOM_ID_DUPLICATE (sent before: its id is not known). An album's other items follow in album_ids.
    message_ids = ArrayField(models.BigIntegerField(null=True), default=list, blank=True)
    album_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    # Done once per group, recorded before the next step: a resume or a retry never deletes or pins twice.
    previous_removed = models.BooleanField(default=False)
    pinned = models.BooleanField(default=False)
    # What Replace did (blank: not asked, or not yet), and why it did not edit when editing was asked.
    previous_post = models.CharField(max_length=10, choices=PreviousPost.choices, blank=True)
    previous_note = models.CharField(max_length=300, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    error = models.TextField(blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["pk"]
        indexes = [models.Index(fields=["run", "status"], name="reminder_run_target_status")]

    def __str__(self) -> str:
        return f"{self.chat} ({self.status})"

    @property
    def parts_total(self) -> int:
        return len(self.random_ids)

    @property
    def partly_sent(self) -> bool:
        return 0 < self.parts_sent < self.parts_total
