from datetime import datetime

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from core.formatting import plural
from core.models import ClaimableRun, RunStatus
from core.outcomes import Outcome, RunOutcome, first_sentence
from packages.models import RAW_FILE_MAX_RETENTION_DAYS

CHANNEL_SETS_PER_CYCLE_MAX = 1000


class StartPoint(models.TextChoices):
    NOW = "now", "From now"
    DATE = "date", "From a date"
    MESSAGE = "message", "From a message"
    HISTORY = "history", "The whole history"


class Channel(models.Model):
    """A chat as a source (or the destination) of archives."""

    chat = models.OneToOneField("accounts.Chat", on_delete=models.CASCADE, related_name="channel")
    is_active = models.BooleanField(default=False)
    is_destination = models.BooleanField(default=False)
    category = models.CharField(max_length=100, blank=True)
    # Raw-file retention: null keeps, 0 keeps 3 hours, N > 0 keeps N days.
    expiration_days = models.IntegerField(
        null=True, blank=True, validators=[MinValueValidator(0), MaxValueValidator(RAW_FILE_MAX_RETENTION_DAYS)]
    )
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # What this channel takes (ingestion/rules.py): empty kinds take every kind; sizes in bytes, null unbounded.
    take_kinds = models.JSONField(default=list, blank=True)
    take_multi_volume = models.BooleanField(default=True)
    leave_extensions = models.JSONField(default=list, blank=True)
    name_pattern = models.CharField(max_length=300, blank=True)
    min_bytes = models.BigIntegerField(null=True, blank=True)
    max_bytes = models.BigIntegerField(null=True, blank=True)
    # Where it starts: posts older than this are never read. "now" is the moment it was chosen (or the
    # channel was switched on); a message start takes that message and what follows.
    start_from = models.CharField(max_length=10, choices=StartPoint.choices, default=StartPoint.NOW)
    start_date = models.DateTimeField(null=True, blank=True)
    start_message_id = models.BigIntegerField(null=True, blank=True)
    start_message_link = models.CharField(max_length=300, blank=True)
    # Its share of a cycle: at most this many sets, then the other channels have their turn (null: the default,
    # INGEST_CHANNEL_SETS_PER_CYCLE); a backfill goes on in the next cycle, which starts at once.
    sets_per_cycle = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(CHANNEL_SETS_PER_CYCLE_MAX)]
    )

    class Meta:
        ordering = ["chat__title"]
        constraints = [
            models.UniqueConstraint(
                fields=["is_destination"], condition=models.Q(is_destination=True), name="one_destination"
            ),
            models.CheckConstraint(
                condition=models.Q(expiration_days__isnull=True)
                | models.Q(expiration_days__gte=0, expiration_days__lte=RAW_FILE_MAX_RETENTION_DAYS),
                name="channel_expiration_days_range",
            ),
        ]

    def __str__(self) -> str:
        return self.chat.title

    @property
    def telegram_id(self) -> int:
        return self.chat.telegram_id

    @property
    def start_floor(self) -> tuple[int, datetime | None]:
        """What the scan reads above: (message id, date); (0, None) reads the whole history."""
        if self.start_from == StartPoint.MESSAGE and self.start_message_id:
            return self.start_message_id - 1, None
        if self.start_from == StartPoint.DATE and self.start_date:
            return 0, self.start_date
        if self.start_from == StartPoint.NOW:
            return 0, self.start_date or self.created_at
        return 0, None

    @property
    def share(self) -> int:
        """Sets it may take in one cycle before the other channels have their turn."""
        return self.sets_per_cycle or settings.INGEST_CHANNEL_SETS_PER_CYCLE

    @property
    def title(self) -> str:
        return self.chat.title

    @property
    def notification_subject(self) -> str:
        """What notifications about this channel are about (core.notifications): one name for raise and resolve."""
        return f"channel:{self.pk}"


class MapRole(models.TextChoices):
    READER = "reader", "Reader"
    WRITER = "writer", "Writer"


class EmptyScans:
    """What a run of empty scans means, for a channel map and for a forum topic alike."""

    consecutive_empty_scans: int

    @property
    def in_backoff(self) -> bool:
        """Idle long enough to be backed off: checked only every INGEST_EMPTY_SCAN_BACKOFF_EVERY_NTH cycle
        (scanning.backoff_skips says whether this cycle is one of the others)."""
        return self.consecutive_empty_scans >= settings.INGEST_EMPTY_SCAN_BACKOFF_THRESHOLD


class AccountChannelMap(EmptyScans, models.Model):
    account = models.ForeignKey("accounts.TelegramAccount", on_delete=models.CASCADE, related_name="channel_maps")
    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="maps")
    role = models.CharField(max_length=10, choices=MapRole.choices, default=MapRole.READER)
    last_processed_message_id = models.BigIntegerField(default=0)
    # Scan state (ingestion/scanning.py): null last_scanned_at = never scanned.
    last_scanned_at = models.DateTimeField(null=True, blank=True)
    last_scan_found_archives = models.PositiveIntegerField(default=0)
    consecutive_empty_scans = models.PositiveIntegerField(default=0)
    # The channel's last message id when it was last scanned to the end (forums: channel-wide).
    scanned_through_message_id = models.BigIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["account", "channel"], name="unique_account_channel_map")]

    def __str__(self) -> str:
        return f"{self.account} {self.role} of {self.channel}"


class TopicProgress(EmptyScans, models.Model):
    map = models.ForeignKey(AccountChannelMap, on_delete=models.CASCADE, related_name="topics")
    topic_id = models.BigIntegerField()
    title = models.CharField(max_length=255)
    fetch_enabled = models.BooleanField(default=True)
    last_processed_message_id = models.BigIntegerField(default=0)
    last_scanned_at = models.DateTimeField(null=True, blank=True)
    last_scan_found_archives = models.PositiveIntegerField(default=0)
    consecutive_empty_scans = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["topic_id"]
        constraints = [models.UniqueConstraint(fields=["map", "topic_id"], name="unique_map_topic")]

    def __str__(self) -> str:
        return self.title


class IngestionTrigger(models.TextChoices):
    SCHEDULE = "schedule", "Schedule"
    MANUAL = "manual", "Ingest now"
    COMMAND = "command", "Command"


# How a run whose account another run held used to end, having done nothing; kept for those runs' outcome. Such a
# run now stays queued and its task tries again (ingestion.tasks).
ANOTHER_RUN_WORKING = "Another ingestion run is already working for this account."
_WORKED = Q(ingested__gt=0) | Q(skipped__gt=0) | Q(duplicates__gt=0)
_CUT_SHORT = ~_WORKED & (Q(status=RunStatus.PARTIAL) | Q(status=RunStatus.FAILED, error=ANOTHER_RUN_WORKING))
# IngestionRun.outcome as filters, for the Runs page's pills (tests/ingestion/test_outcomes.py keeps them agreeing).
RUN_OUTCOME_FILTERS = {
    Outcome.WAITING: Q(status=RunStatus.QUEUED),
    Outcome.RUNNING: Q(status=RunStatus.RUNNING),
    Outcome.SUCCESS: Q(status=RunStatus.SUCCESS, ingested__gt=0),
    Outcome.PARTIAL: Q(status=RunStatus.PARTIAL) & _WORKED,
    Outcome.FAILED: Q(status=RunStatus.FAILED) & ~_CUT_SHORT,
    Outcome.IDLE: Q(status=RunStatus.SUCCESS, ingested=0) | _CUT_SHORT,
}


class IngestionRun(ClaimableRun):
    # History: an account that ran is switched off, not deleted (accounts.services.account_delete).
    account = models.ForeignKey("accounts.TelegramAccount", on_delete=models.PROTECT, related_name="ingestion_runs")
    trigger = models.CharField(max_length=10, choices=IngestionTrigger.choices, default=IngestionTrigger.SCHEDULE)
    # Ingest now on a channel's page: this run reads that channel only. Null: every channel the account reads.
    channel = models.ForeignKey(Channel, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # A scheduled run's task is sent with a random delay (INGEST_JITTER_SECONDS) so accounts do not all start at
    # once: it waits until then, which its page says. Null: it starts as soon as a worker is free.
    starts_at = models.DateTimeField(null=True, blank=True)
    messages_scanned = models.PositiveIntegerField(default=0)
    archives_found = models.PositiveIntegerField(default=0)
    duplicates = models.PositiveIntegerField(default=0)
    ingested = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    filtered = models.PositiveIntegerField(default=0)  # sets the channel's rules leave out (not skipped)
    bytes_downloaded = models.BigIntegerField(default=0)
    bytes_uploaded = models.BigIntegerField(default=0)
    requests_sent = models.PositiveIntegerField(default=0)
    # Live activity, written at most every INGEST_PROGRESS_EVERY_SECONDS.
    current_channel = models.CharField(max_length=255, blank=True)
    current_topic = models.CharField(max_length=255, blank=True)
    current_file = models.CharField(max_length=500, blank=True)
    current_bytes_done = models.BigIntegerField(default=0)
    current_bytes_total = models.BigIntegerField(default=0)
    current_step = models.CharField(max_length=40, blank=True)
    # The packages this run uploaded first (a re-upload keeps its first run): the link lives here, above packages.
    packages = models.ManyToManyField("packages.Package", blank=True, related_name="ingestion_runs")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Ingestion run {self.pk} ({self.account})"

    def get_absolute_url(self) -> str:
        return reverse("ingestion:run-detail", args=[self.pk])

    @property
    def waits_until(self):
        """When a queued run's delayed start comes; None when it waits for a free worker only."""
        if self.status == RunStatus.QUEUED and self.starts_at and self.starts_at > timezone.now():
            return self.starts_at
        return None

    @property
    def outcome(self) -> RunOutcome:
        """What the run came to (core.outcomes): a cycle that ingested nothing did nothing, and says why; one cut
        short before it did anything (the account busy or resting, a long FloodWait, an outage) did nothing too."""
        if self.status == RunStatus.QUEUED:
            return RunOutcome(Outcome.WAITING, "for its spread start" if self.waits_until else "for a free worker")
        if self.status in (RunStatus.RUNNING, RunStatus.PAUSED):
            return RunOutcome(Outcome(self.status))
        if self.status == RunStatus.SUCCESS:
            if self.ingested:
                return RunOutcome(Outcome.SUCCESS)
            if self.duplicates:
                return RunOutcome(Outcome.IDLE, f"{plural(self.duplicates, 'archive')} already kept")
            return RunOutcome(Outcome.IDLE, "nothing new to ingest")
        did_work = self.ingested or self.skipped or self.duplicates
        if not did_work and (self.status == RunStatus.PARTIAL or self.error == ANOTHER_RUN_WORKING):
            return RunOutcome(Outcome.IDLE, first_sentence(self.error))
        return RunOutcome(Outcome(self.status), first_sentence(self.error))

    @property
    def duration_seconds(self) -> float | None:
        """From claim to end (or to now while it works); None before a worker claims it."""
        if self.claimed_at is None:
            return None
        return ((self.finished_at or timezone.now()) - self.claimed_at).total_seconds()

    @property
    def progress_percent(self) -> int:
        if not self.current_bytes_total:
            return 0
        return min(100, int(self.current_bytes_done * 100 / self.current_bytes_total))


class ScanAction(models.TextChoices):
    SCAN = "scan", "Scanned"
    CHECK = "check", "Checked"
    SKIP = "skip", "Sat out"
    FAILED = "failed", "Unreachable"


class ChannelScan(models.Model):
    """What one ingestion run did with one channel: scanned it (and why), or sat it out (and why)."""

    run = models.ForeignKey(IngestionRun, on_delete=models.CASCADE, related_name="scans")
    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="scans")
    scanned_at = models.DateTimeField(default=timezone.now)
    action = models.CharField(max_length=10, choices=ScanAction.choices)
    reason = models.CharField(max_length=300, blank=True)
    topics = models.PositiveIntegerField(default=0)  # forum topics read (a forum is scanned channel-wide)
    requests = models.PositiveIntegerField(default=0)
    messages = models.PositiveIntegerField(default=0)
    found = models.PositiveIntegerField(default=0)
    ingested = models.PositiveIntegerField(default=0)
    duplicates = models.PositiveIntegerField(default=0)
    skipped = models.PositiveIntegerField(default=0)
    filtered = models.PositiveIntegerField(default=0)
    seconds = models.FloatField(default=0)

    class Meta:
        ordering = ["-scanned_at", "-pk"]
        indexes = [models.Index(fields=["channel", "-scanned_at"], name="channel_scan_history")]

    def __str__(self) -> str:
        return f"{self.channel} in run {self.run_id}: {self.action}"


class SkipReason(models.TextChoices):
    DOWNLOAD_FAILED = "DOWNLOAD_FAILED", "Download failed"
    UPLOAD_FAILED = "UPLOAD_FAILED", "Upload failed"
    EXTRACT_FAILED = "EXTRACT_FAILED", "Listing failed"
    SIZE_LIMIT = "SIZE_LIMIT", "Too large"
    MISSING_PART = "MISSING_PART", "Missing part"
    NEEDS_PASSWORD = "NEEDS_PASSWORD", "Needs password"
    CONFIGURATION = "CONFIGURATION", "Configuration error"
    NO_DESTINATION = "NO_DESTINATION", "No destination"
    WAITING_FOR_VOLUMES = "WAITING_FOR_VOLUMES", "Waiting for volumes"
    IN_FLIGHT = "IN_FLIGHT", "Duplicate in flight"
    DISK_FULL = "DISK_FULL", "Disk full"
    ERROR = "ERROR", "Unexpected error"


# Reasons a later cycle can fix by trying again.
RETRYABLE_REASONS = frozenset(
    {
        SkipReason.DOWNLOAD_FAILED,
        SkipReason.UPLOAD_FAILED,
        SkipReason.MISSING_PART,
        SkipReason.NO_DESTINATION,
        SkipReason.WAITING_FOR_VOLUMES,
        SkipReason.IN_FLIGHT,
        SkipReason.DISK_FULL,
        SkipReason.ERROR,
    }
)
# Not failures: the set is looked at again next cycle, and no attempt is counted.
PENDING_REASONS = frozenset({SkipReason.WAITING_FOR_VOLUMES, SkipReason.IN_FLIGHT})


class SkippedPackage(models.Model):
    channel = models.ForeignKey(Channel, on_delete=models.CASCADE, related_name="skipped_packages")
    message_id = models.BigIntegerField()
    message_ids = models.JSONField(default=list)
    topic_id = models.BigIntegerField(null=True, blank=True)
    account = models.ForeignKey("accounts.TelegramAccount", null=True, on_delete=models.SET_NULL)
    file_name = models.CharField(max_length=500)
    file_size = models.BigIntegerField(default=0)
    is_multipart = models.BooleanField(default=False)
    part_count = models.PositiveIntegerField(default=1)
    reason = models.CharField(max_length=20, choices=SkipReason.choices, db_index=True)
    error_message = models.TextField(blank=True)
    attempt_count = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-updated_at"]
        constraints = [models.UniqueConstraint(fields=["channel", "message_id"], name="unique_skipped_message")]
        # The Skipped page's order: its first page is read from the index, not sorted from every row.
        indexes = [models.Index(fields=["-updated_at", "-id"], name="skipped_newest_first")]

    def __str__(self) -> str:
        return f"{self.file_name} ({self.reason})"

    @property
    def is_pending(self) -> bool:
        """Not a failure: waiting for volumes, or for another worker's copy; looked at every cycle."""
        return self.reason in PENDING_REASONS

    @property
    def is_retryable(self) -> bool:
        return self.reason in RETRYABLE_REASONS


class CatalogAudit(models.Model):
    """One check of the catalog against the destination, both ways, and of how far each source was scanned."""

    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    packages_checked = models.PositiveIntegerField(default=0)
    documents_checked = models.PositiveIntegerField(default=0)
    # [{"package": id, "file_name", "message_ids": [gone ids]}]: packages whose destination messages are gone.
    missing = models.JSONField(default=list)
    # [{"message_id", "name", "content_hash"}]: destination documents no package points at ("" = no catalog line).
    orphans = models.JSONField(default=list)
    # [{"channel", "title", "topic_id", "topic_title", "scanned_through", "last_scan", "gaps": [{"message_id",
    # "file_name", "reason"}]}] per source channel, and per fetched topic of a forum.
    coverage = models.JSONField(default=list)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"Catalog audit of {self.created_at:%Y-%m-%d %H:%M}"

    @property
    def problems(self) -> int:
        return len(self.missing) + len(self.orphans) + (1 if self.error else 0)

    @property
    def coverage_rows(self) -> list[dict]:
        """The coverage with its last scans as datetimes, for the page."""
        return [
            {**row, "last_scan": datetime.fromisoformat(row["last_scan"]) if row["last_scan"] else None}
            for row in self.coverage
        ]
