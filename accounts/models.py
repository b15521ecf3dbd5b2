from django.core.validators import RegexValidator
from django.db import models
from django.utils import timezone

from telegram.records import CHAT_TYPES, ChatRef

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

    class Meta:
        ordering = ["phone"]

    def __str__(self) -> str:
        return self.display_name or self.phone

    @property
    def is_authenticated_account(self) -> bool:
        return self.auth_state == AuthState.AUTHENTICATED


class Chat(models.Model):
    """A channel, supergroup or group that at least one account can see."""

    TYPE_CHOICES = [(value, value.title()) for value in CHAT_TYPES]

    telegram_id = models.BigIntegerField(unique=True)
    title = models.CharField(max_length=255)
    type = models.CharField(max_length=20, choices=TYPE_CHOICES)
    is_forum = models.BooleanField(default=False)
    slow_mode_seconds = models.PositiveIntegerField(default=0)
    accounts = models.ManyToManyField(TelegramAccount, through="AccountChat", related_name="chats")
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["title"]

    def __str__(self) -> str:
        return self.title


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
