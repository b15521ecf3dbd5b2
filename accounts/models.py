from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

from telegram.records import CHAT_TYPES, USER, ChatRef

phone_validator = RegexValidator(
    r"^\+[1-9]\d{6,14}$", "Enter the phone number in international format, e.g. +15550000001."
)


class AuthState(models.TextChoices):
    PENDING = "pending", "Not logged in"
    AWAITING_CODE = "awaiting_code", "Waiting for code"
    AWAITING_PASSWORD = "awaiting_password", "Waiting for 2FA password"
    AUTHENTICATED = "authenticated", "Authenticated"
    EXPIRED = "expired", "Session expired"
    RESTRICTED = "restricted", "Restricted by Telegram"


class TelegramAccount(models.Model):
    phone = models.CharField(max_length=20, unique=True, validators=[phone_validator])
    display_name = models.CharField(max_length=200, blank=True)
    telegram_user_id = models.BigIntegerField(null=True, blank=True)
    username = models.CharField(max_length=100, blank=True)
    auth_state = models.CharField(max_length=20, choices=AuthState.choices, default=AuthState.PENDING)
    # StringSession sealed with core.crypto; never shown, never logged.
    session_sealed = models.TextField(blank=True)
    login_code_hash = models.CharField(max_length=200, blank=True)
    is_premium = models.BooleanField(default=False)
    upload_limit_bytes = models.BigIntegerField(default=2_097_152_000)
    is_active = models.BooleanField(default=True)
    last_seen_at = models.DateTimeField(null=True, blank=True)
    last_error = models.TextField(blank=True)
    chats_refreshed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    # The send pace as last recorded (accounts.pace); the shared Redis bucket holds the live one. Null: the ceiling.
    send_budget_per_minute = models.FloatField(null=True, blank=True)
    send_budget_reason = models.CharField(max_length=255, blank=True)
    send_budget_changed_at = models.DateTimeField(null=True, blank=True)
    # When the last send token taken from the bucket was due: a bucket Redis forgot starts empty from there.
    send_spent_until = models.DateTimeField(null=True, blank=True)
    # Quarantine: nothing is sent or ingested through the account until then (PEER_FLOOD, too many FloodWaits).
    resting_until = models.DateTimeField(null=True, blank=True)
    rest_reason = models.CharField(max_length=255, blank=True)
    rest_resumes_runs = models.BooleanField(default=True, help_text="Runs paused by the rest resume after it.")
    # The operator's "stop all sending for this account now" switch.
    sending_stopped = models.BooleanField(default=False)
    # Ingestion's hours (a daily window of wall-clock hours in ingest_timezone, core.windows; 0–24: always) and its
    # bandwidth cap, shared by every download and upload of the account (null: no cap).
    ingest_start_hour = models.PositiveSmallIntegerField(default=0)
    ingest_end_hour = models.PositiveSmallIntegerField(default=24)
    ingest_timezone = models.CharField(max_length=64, default="UTC")
    ingest_bytes_per_second = models.PositiveBigIntegerField(null=True, blank=True)
    # When the last transfer bytes taken from the bucket were due: a bucket Redis forgot starts empty from there.
    ingest_spent_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["phone"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(ingest_start_hour__lte=23, ingest_end_hour__gte=1, ingest_end_hour__lte=24)
                & ~models.Q(ingest_start_hour=models.F("ingest_end_hour")),
                name="account_ingest_hours",
            ),
            models.CheckConstraint(
                condition=models.Q(ingest_bytes_per_second__isnull=True) | models.Q(ingest_bytes_per_second__gte=1),
                name="account_ingest_bytes_per_second",
            ),
        ]

    def __str__(self) -> str:
        return self.display_name or self.phone

    @property
    def notification_subject(self) -> str:
        """What notifications about this account are about (core.notifications): one name for raise and resolve."""
        return f"account:{self.pk}"

    @property
    def is_authenticated_account(self) -> bool:
        return self.auth_state == AuthState.AUTHENTICATED

    @property
    def is_resting(self) -> bool:
        return self.resting_until is not None and self.resting_until > timezone.now()


class Chat(models.Model):
    """A channel, supergroup or group that at least one account can see; or, of type `user`, a person an account
    has a private chat with (their user id, their name as the title): something to send to, never a reminder
    target or a source."""

    TYPE_CHOICES = [(value, "Person" if value == USER else value.title()) for value in CHAT_TYPES]

    telegram_id = models.BigIntegerField(unique=True)
    title = models.CharField(max_length=255)
    type = models.CharField(max_length=20, choices=TYPE_CHOICES)
    username = models.CharField(max_length=100, blank=True, help_text="A person's @username, when they have one.")
    # The invite link (t.me/+HASH) an account joined by, so other accounts can join this private chat too.
    invite_hash = models.CharField(max_length=64, blank=True)
    is_forum = models.BooleanField(default=False)
    slow_mode_seconds = models.PositiveIntegerField(default=0)
    # Members as Telegram last counted them (audiences filter on it); None until a refresh says.
    members_count = models.PositiveIntegerField(null=True, blank=True)
    migrated_to = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="migrated_from",
        help_text="The supergroup this basic group was upgraded to: its reminder targets moved there.",
    )
    accounts = models.ManyToManyField(TelegramAccount, through="AccountChat", related_name="chats")
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title

    @property
    def is_person(self) -> bool:
        return self.type == USER

    @property
    def label(self) -> str:
        """How pickers name it: a person by their name and @username when known."""
        return f"{self.title} (@{self.username})" if self.username else self.title


class ChatTopic(models.Model):
    """A forum topic of a chat an account can post in, by its title: what the reminder wizard offers to pick.
    Stored when the account's chats are refreshed; General (topic 1) is the forum itself, not listed."""

    chat = models.ForeignKey(Chat, on_delete=models.CASCADE, related_name="topics")
    topic_id = models.PositiveIntegerField()
    title = models.CharField(max_length=255)

    class Meta:
        ordering = ["chat", "title", "topic_id"]
        constraints = [models.UniqueConstraint(fields=["chat", "topic_id"], name="unique_chat_topic")]

    def __str__(self) -> str:
        return f"{self.chat} / {self.title}"


class AccountChat(models.Model):
    """What one account knows of a chat: access hashes are per account in Telegram."""

    account = models.ForeignKey(TelegramAccount, on_delete=models.CASCADE, related_name="chat_links")
    chat = models.ForeignKey(Chat, on_delete=models.CASCADE, related_name="account_links")
    access_hash = models.BigIntegerField(default=0)
    can_post = models.BooleanField(default=False)
    seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["account", "chat"], name="unique_account_chat")]

    def __str__(self) -> str:
        return f"{self.account} in {self.chat}"

    @property
    def ref(self) -> ChatRef:
        return ChatRef(id=self.chat.telegram_id, access_hash=self.access_hash, type=self.chat.type)


class PaceEventKind(models.TextChoices):
    FLOOD_WAIT = "flood_wait", "FloodWait"
    SLOWMODE_WAIT = "slowmode_wait", "Slow-mode wait"
    PEER_FLOOD = "peer_flood", "PEER_FLOOD"
    RAISED = "raised", "Raised after clean sending"


class AccountPaceEvent(models.Model):
    """What Telegram told an account about its pace, and what the pace became: its health's record."""

    account = models.ForeignKey(TelegramAccount, on_delete=models.CASCADE, related_name="pace_events")
    at = models.DateTimeField(default=timezone.now)
    kind = models.CharField(max_length=16, choices=PaceEventKind.choices)
    wait_seconds = models.PositiveIntegerField(default=0)
    budget_before = models.FloatField()
    budget_after = models.FloatField()
    reason = models.CharField(max_length=255, blank=True)

    class Meta:
        ordering = ["-at", "-pk"]
        indexes = [models.Index(fields=["account", "kind", "at"], name="account_pace_event_kind_at")]

    def __str__(self) -> str:
        return f"{self.account} {self.kind}: {self.budget_before:g} → {self.budget_after:g}/min"


class AccountRest(models.Model):
    """One quarantine of an account: its history on the Accounts page."""

    account = models.ForeignKey(TelegramAccount, on_delete=models.CASCADE, related_name="rests")
    started_at = models.DateTimeField(default=timezone.now)
    until = models.DateTimeField()
    reason = models.CharField(max_length=255)
    ended_at = models.DateTimeField(null=True, blank=True)
    ended_by = models.CharField(max_length=16, blank=True, help_text="time, or operator")

    class Meta:
        ordering = ["-started_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.account} rests until {self.until:%Y-%m-%d %H:%M}"


class AccountSendMinute(models.Model):
    """Messages an account sent in one minute (UTC), for its sends in the last hour and day."""

    account = models.ForeignKey(TelegramAccount, on_delete=models.CASCADE, related_name="send_minutes")
    minute = models.DateTimeField()
    sends = models.PositiveIntegerField(default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["account", "minute"], name="unique_account_send_minute")]

    def __str__(self) -> str:
        return f"{self.account} {self.minute:%H:%M}: {self.sends}"
