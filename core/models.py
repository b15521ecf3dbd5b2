from django.conf import settings
from django.db import models
from django.utils import timezone


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"
    SUCCESS = "success", "Success"
    PARTIAL = "partial", "Partial"
    FAILED = "failed", "Failed"


# A worker has the run or is about to: it changes without the operator, so pages keep polling it.
IN_FLIGHT = (RunStatus.QUEUED, RunStatus.RUNNING)


class ClaimableRun(models.Model):
    """A unit of work that exactly one worker may hold at a time.

    Celery may deliver a task twice; the claim (a conditional UPDATE on this
    row) decides which delivery works and which returns.
    """

    status = models.CharField(max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True)
    worker_id = models.CharField(max_length=200, blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    requeue_count = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        abstract = True

    live_statuses = IN_FLIGHT

    @property
    def is_live(self) -> bool:
        """The one rule pages and the API follow to keep polling a run."""
        return self.status in self.live_statuses

    @property
    def is_over(self) -> bool:
        return self.status in {RunStatus.SUCCESS, RunStatus.PARTIAL, RunStatus.FAILED}


class NotificationSeverity(models.TextChoices):
    INFO = "info", "Info"
    WARNING = "warning", "Warning"
    ERROR = "error", "Error"


class Notification(models.Model):
    """Something the operators should know about, raised by a service (core.notifications).

    One row per (type, subject) and 24 hours: a repeat bumps `count` on the unread row instead of
    adding one. Read state is shared by the whole team.
    """

    type = models.CharField(max_length=64)
    severity = models.CharField(max_length=10, choices=NotificationSeverity.choices)
    title = models.CharField(max_length=200)
    message = models.TextField(blank=True)
    context = models.JSONField(default=dict, blank=True)
    # What the notification is about, e.g. "channel:12": repeats about the same subject merge.
    subject = models.CharField(max_length=255)
    url = models.CharField(max_length=500, blank=True)
    count = models.PositiveIntegerField(default=1)
    read_at = models.DateTimeField(null=True, blank=True)
    # Set with read_at when the cause went away by itself (core.notifications.notifications_resolve).
    resolved_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_raised_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-last_raised_at", "-pk"]
        indexes = [
            models.Index(fields=["type", "subject", "-created_at"], name="notification_dedupe"),
            models.Index(fields=["-last_raised_at"], name="notification_unread", condition=models.Q(read_at=None)),
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def is_read(self) -> bool:
        return self.read_at is not None

    @property
    def is_resolved(self) -> bool:
        return self.resolved_at is not None


class IdempotentRequest(models.Model):
    """A POST that started work, by its Idempotency-Key (core.idempotency): a retry of it with the same key,
    by the same user on the same endpoint, gets this answer instead of starting the work again."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    endpoint = models.CharField(max_length=300, help_text='"POST /api/reminders/4/fire/"')
    # The request's body, hashed: the same key sent with another body is a mistake, said so.
    fingerprint = models.CharField(max_length=64)
    # Null only inside the first request's own transaction, while it is being answered.
    status_code = models.PositiveSmallIntegerField(null=True)
    answer = models.JSONField(null=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "key", "endpoint"], name="unique_idempotent_request"),
        ]

    def __str__(self) -> str:
        return f"{self.endpoint} [{self.key}]"


class SessionHolder(models.Model):
    """Who has an account's Telegram session open right now. A session lease's advisory lock goes with a
    PostgreSQL restart while its holder is still talking to Telegram; this row stays, so a new opener waits
    until that holder has let go or is surely gone (its process ended, or its beat quiet for two periods)."""

    name = models.CharField(max_length=100, primary_key=True)
    worker_id = models.CharField(max_length=200)
    token = models.CharField(max_length=32)  # which of that process's leases (a process opens several in turn)
    beat_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.name} held by {self.worker_id}"


class AuditEntry(models.Model):
    """One action someone took (core.audit): a write to a page or the API, a management command, or a task
    that changed something. Who, from where, when, what was asked and how it was answered; the rows it
    changed are its AuditChanges."""

    class Via(models.TextChoices):
        PAGE = "page", "Page"
        API = "api", "API"
        COMMAND = "command", "Command"
        TASK = "task", "Task"
        BOT = "bot", "Bot"

    at = models.DateTimeField(default=timezone.now, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Kept as written: the person's login, "<login>'s token '<name>'", "system" or "anonymous", even after
    # the login is renamed or deleted.
    actor = models.CharField(max_length=200, db_index=True)
    via = models.CharField(max_length=10, choices=Via.choices)
    action = models.CharField(max_length=300, help_text='"POST reminders:run-cancel" or "command rotate_session_keys"')
    # The action in words (core.audit_words): "vera cancelled Flash sale run #12".
    summary = models.CharField(max_length=500, blank=True)
    # The route, never the path a person sent (it may be a secret: core.routes): "/invite/:token/".
    path = models.CharField(max_length=500, blank=True)
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    address = models.GenericIPAddressField(null=True, blank=True)
    # Rows changed past settings.AUDIT_MAX_CHANGES (a task touching thousands): counted, not listed.
    changes_left_out = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-at", "-pk"]
        verbose_name_plural = "audit entries"

    def __str__(self) -> str:
        return f"{self.actor}: {self.action}"


class AuditChange(models.Model):
    """One row an AuditEntry created, changed or deleted, with the before and after of its changed fields
    (secrets left out)."""

    class Operation(models.TextChoices):
        CREATED = "created", "Created"
        CHANGED = "changed", "Changed"
        DELETED = "deleted", "Deleted"

    entry = models.ForeignKey(AuditEntry, on_delete=models.CASCADE, related_name="changes")
    kind = models.CharField(max_length=100, help_text='The model\'s label: "reminders.ReminderRun"')
    object_id = models.CharField(max_length=64)
    object_repr = models.CharField(max_length=300)
    operation = models.CharField(max_length=10, choices=Operation.choices)
    # {"field": [before, after]}; a created row has no before, a deleted one no after.
    fields = models.JSONField(default=dict)

    class Meta:
        ordering = ["pk"]
        indexes = [models.Index(fields=["kind", "object_id"], name="audit_change_object")]

    def __str__(self) -> str:
        return f"{self.operation} {self.kind} {self.object_id}"


class Role(models.TextChoices):
    """What a login may do (core.roles): operators change things, viewers look."""

    OPERATOR = "operator", "Operator"
    VIEWER = "viewer", "Viewer"


class Invite(models.Model):
    """A link that lets one person choose a login's password once (core.people): a new login with a role, or
    a new password for an existing one. Only the hash of the link's secret is kept."""

    class Purpose(models.TextChoices):
        NEW_LOGIN = "new", "New login"
        PASSWORD_RESET = "reset", "Password reset"

    token_hash = models.CharField(max_length=64, unique=True)
    purpose = models.CharField(max_length=10, choices=Purpose.choices, default=Purpose.NEW_LOGIN)
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)
    # Preset by the operator; blank: the person chooses it when they open the link.
    username = models.CharField(max_length=150, blank=True)
    # A reset's login; a new login's once the link is used.
    login = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="invites"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        who = self.username or (self.login.username if self.login_id else "a new login")
        return f"{self.get_purpose_display()} for {who}"


class LoginOrigin(models.Model):
    """Who added a login and how, kept as long as the login (the audit trail is purged after a while)."""

    class How(models.TextChoices):
        INVITE = "invite", "Invite link"
        PASSWORD = "password", "Password"
        COMMAND = "command", "Command line"

    login = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="origin"
    )
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    how = models.CharField(max_length=10, choices=How.choices)
    added_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.login_id} added by {self.added_by_id or 'nobody'} ({self.how})"


class ApiToken(models.Model):
    """A person's named key to the API (core.tokens). Only the secret's SHA-256 is kept; the secret is shown
    once, when it is made. A read token may only look; every token ends at its expiry or when revoked."""

    class Scope(models.TextChoices):
        READ = "read", "Read"
        WRITE = "write", "Read and write"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    scope = models.CharField(max_length=5, choices=Scope.choices, default=Scope.READ)
    # The secret's first characters: enough to recognise it in a script, too few to use.
    prefix = models.CharField(max_length=12)
    secret_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    # Written at most once a minute per token (core.tokens), so reads stay cheap.
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.owner.get_username()}'s token '{self.name}'"

    @property
    def expired(self) -> bool:
        return self.expires_at <= timezone.now()

    @property
    def usable(self) -> bool:
        return self.revoked_at is None and not self.expired
