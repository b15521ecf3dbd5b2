from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import F, Func, TextField, Value
from django.db.models.functions import Lower
from django.utils import timezone

from core.models import ClaimableRun, RunStatus
from core.outcomes import Outcome, RunOutcome, first_sentence

# How long a channel may keep its raw files, in days (a century): "forever" is an empty value, not a huge one.
RAW_FILE_MAX_RETENTION_DAYS = 36_500


def words_of(field: str) -> SearchVector:
    """The words of a name or path ("red-dragon/Body.stl" → red, dragon, body, stl) for word-prefix search."""
    separated = Func(
        F(field), Value(r"[^[:alnum:]]+"), Value(" "), Value("g"), function="regexp_replace", output_field=TextField()
    )
    return SearchVector(separated, config="simple")


class MetadataStatus(models.TextChoices):
    PENDING = "pending", "Metadata pending"
    COMPLETE = "complete", "Complete"
    UNAVAILABLE = "unavailable", "Unavailable"


class PasswordSource(models.TextChoices):
    CAPTION = "caption", "Found in the caption"
    CHANNEL = "channel", "One of the channel's passwords"


class GroupingRule(models.TextChoices):
    """Why a package is in its collection, in the operator's words."""

    ALBUM = "album", "Posted in one album"
    REPLY = "reply", "Replies to one another"
    BASE_NAME = "base_name", "Same name, posted close together"
    CREATOR = "creator", "Same creator, posted close together"
    OPERATOR = "operator", "Put together by an operator"


class Collection(models.Model):
    """Packages that belong together (one model's parts, versions, a creator's drop)."""

    name = models.CharField(max_length=255)
    # The rule that made it; an operator's edit (rename, merge, add) makes it the operator's.
    rule = models.CharField(max_length=12, choices=GroupingRule.choices)
    source_chat = models.ForeignKey(
        "accounts.Chat", null=True, blank=True, on_delete=models.SET_NULL, related_name="collections"
    )
    source_topic_id = models.BigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return self.name


class RepackDecision(models.TextChoices):
    KEPT = "kept", "Kept both"
    SKIP_COPIES = "skip_copies", "Skipping future copies"


class Package(models.Model):
    """One unique archive set, uploaded once to the destination channel."""

    content_hash = models.CharField(max_length=64, unique=True)  # ingestion.fetching.content_hash_of
    file_name = models.CharField(max_length=500)
    file_size = models.BigIntegerField()
    archive_type = models.CharField(max_length=10)
    is_multipart = models.BooleanField(default=False)
    part_count = models.PositiveIntegerField(default=1)
    volume_names = ArrayField(models.CharField(max_length=500), default=list)
    # What told that its volumes were all posted: their own bytes (which rule) or time; empty for one file.
    whole_by = models.CharField(max_length=300, blank=True)
    # Chats, not ingestion's channels: packages sit below ingestion (docs/architecture.md).
    source_chat = models.ForeignKey("accounts.Chat", null=True, on_delete=models.SET_NULL, related_name="packages")
    source_message_id = models.BigIntegerField(null=True)
    source_message_ids = ArrayField(models.BigIntegerField(), default=list)
    source_topic_id = models.BigIntegerField(null=True, blank=True)
    # The forum topic's title when the package was ingested ("" outside a topic).
    source_topic_title = models.CharField(max_length=255, blank=True)
    # Every Telegram document id seen with this content: the cheapest dedupe check.
    telegram_document_ids = ArrayField(models.BigIntegerField(), default=list)
    destination_chat = models.ForeignKey(
        "accounts.Chat", null=True, on_delete=models.SET_NULL, related_name="destination_packages"
    )
    dest_message_ids = ArrayField(models.BigIntegerField(), default=list)
    dest_part_names = ArrayField(models.CharField(max_length=500), default=list)
    dest_checked_at = models.DateTimeField(null=True, blank=True)
    # Its destination message was deleted: the next cycle uploads it again, with fresh random_ids.
    reupload_needed = models.BooleanField(default=False)
    upload_generation = models.PositiveSmallIntegerField(default=0)
    file_count = models.PositiveIntegerField(default=0)
    # The words of the file name and of every listed path (packages.services.package_search_words_update).
    search_words = SearchVectorField(null=True, editable=False)
    # The distinct three-letter pieces of the same text, lowercased: substring search through a GIN index
    # (PostgreSQL's pg_trgm is not always installed; the SQL function name_grams is ours, migration 0007).
    name_grams = ArrayField(models.TextField(), default=list, editable=False)
    # The same text, lowercased: what confirms a substring the pieces point at, in the row itself.
    search_text = models.TextField(blank=True, editable=False)
    # The listing's fingerprint (packages.repacks.listing_fingerprint): the same files in another wrapper.
    listing_fingerprint = models.CharField(max_length=64, blank=True, db_index=True)
    # An earlier package with (nearly) the same listing: this one is likely a repack of it.
    likely_same_as = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="likely_copies"
    )
    likely_same_overlap = models.PositiveSmallIntegerField(null=True, blank=True)  # percent of files in common
    repack_decision = models.CharField(max_length=12, choices=RepackDecision.choices, blank=True)
    metadata_status = models.CharField(
        max_length=12, choices=MetadataStatus.choices, default=MetadataStatus.PENDING, db_index=True
    )
    metadata_error = models.TextField(blank=True)
    # Why its main model got no preview (hostile, huge, empty, unreadable); blank when it got one or has none.
    model_preview_note = models.TextField(blank=True)
    # The source post's text (its caption), as posted: the set's first caption, and each volume's in order.
    # Packages ingested before captions were kept have none.
    caption = models.TextField(blank=True)
    volume_captions = ArrayField(models.TextField(blank=True), default=list, blank=True)
    # The password that opened its listing (sealed like sessions, core.crypto), and where it came from;
    # operators may read it, viewers only see that there is one.
    password_sealed = models.TextField(blank=True)
    password_source = models.CharField(max_length=8, choices=PasswordSource.choices, blank=True)
    # Listed entries whose data is encrypted; needs_password: every entry is, or the listing itself is
    # (encrypted headers). Such a package is kept and uploaded like any other (docs/decisions/0045-*.md).
    encrypted_files = models.PositiveIntegerField(default=0)
    needs_password = models.BooleanField(default=False, db_index=True)
    creator = models.CharField(max_length=255, blank=True, db_index=True)
    tags = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    uploaded_by = models.ForeignKey(
        "accounts.TelegramAccount", null=True, on_delete=models.SET_NULL, related_name="uploaded_packages"
    )
    raw_files = models.ManyToManyField("RawFile", blank=True, related_name="packages")
    # How it was posted, for previews and collections: when, in which album, answering which message.
    source_posted_at = models.DateTimeField(null=True, blank=True)
    source_grouped_id = models.BigIntegerField(null=True, blank=True)
    source_reply_to_id = models.BigIntegerField(null=True, blank=True)
    preview = models.ForeignKey("PackagePreview", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    collection = models.ForeignKey(
        Collection, null=True, blank=True, on_delete=models.SET_NULL, related_name="packages"
    )
    collection_rule = models.CharField(max_length=12, choices=GroupingRule.choices, blank=True)
    # An operator took it out of its collection: automatic grouping leaves it alone.
    grouping_dismissed = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            GinIndex(fields=["telegram_document_ids"], name="package_document_ids"),
            GinIndex(fields=["search_words"], name="package_search_words"),
            GinIndex(fields=["name_grams"], name="package_name_grams"),
            GinIndex(fields=["tags"], name="package_tags"),
            models.Index(fields=["file_size"], name="package_file_size"),
            models.Index(Lower("file_name"), "id", name="package_file_name"),  # the list sorted by name
        ]
        constraints = [
            models.UniqueConstraint(fields=["source_chat", "source_message_id"], name="unique_package_source_message"),
        ]

    def __str__(self) -> str:
        return self.file_name

    @property
    def source_topic_name(self) -> str:
        if self.source_topic_id is None:
            return ""
        return self.source_topic_title or f"topic #{self.source_topic_id}"


class PackageFile(models.Model):
    """One entry of a package's archive listing (never extracted)."""

    package = models.ForeignKey(Package, on_delete=models.CASCADE, related_name="files")
    path = models.TextField()
    size = models.BigIntegerField(default=0)
    compressed_size = models.BigIntegerField(null=True, blank=True)
    crc32 = models.BigIntegerField(null=True, blank=True)
    encrypted = models.BooleanField(default=False)
    # A zip entry's local header offset (a single-volume zip): the file is read out by ranged reads from there.
    header_offset = models.BigIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["path"]
        # Finding a repack: which other packages hold a file of this size and CRC.
        indexes = [models.Index(fields=["crc32", "size"], name="packagefile_crc_size")]

    def __str__(self) -> str:
        return self.path


class PreviewSource(models.TextChoices):
    PHOTO = "photo", "Photo posted with the archive"
    ARCHIVE = "archive", "Image inside the archive"
    EMBEDDED = "embedded", "The 3MF model's own picture"
    RENDER = "render", "Drawn from the model"


class PackagePreview(models.Model):
    """A thumbnail a package can show: of the photo posted with it, of an image inside its archive, or of its
    main model (the 3MF's own picture, or one drawn of its mesh)."""

    package = models.ForeignKey(Package, on_delete=models.CASCADE, related_name="previews")
    source = models.CharField(max_length=8, choices=PreviewSource.choices)
    # The archive entry's path (the image's, or the model's), or the photo's message id in the source chat.
    path = models.TextField(blank=True)
    source_message_id = models.BigIntegerField(null=True, blank=True)
    image = models.FileField(upload_to="previews/", max_length=500)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-source", "path", "pk"]  # the posted photo first, then the images inside by path
        constraints = [
            models.UniqueConstraint(fields=["package", "source", "path"], name="unique_package_preview"),
        ]

    def __str__(self) -> str:
        return self.path or f"photo {self.source_message_id}"


class RawFile(models.Model):
    """A downloaded Telegram file, kept for a while to backfill metadata or re-upload."""

    file_uid = models.CharField(max_length=100, unique=True)  # the Telegram document id
    file_name = models.CharField(max_length=500)
    size = models.BigIntegerField()
    hash_algorithm = models.CharField(max_length=16, default="sha256")
    hash = models.CharField(max_length=128)
    object = models.FileField(upload_to="raw/", max_length=500, blank=True)
    source_chat = models.ForeignKey("accounts.Chat", null=True, on_delete=models.SET_NULL, related_name="raw_files")
    processed_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True, db_index=True)
    purged_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            # One unprocessed object per content: a duplicate download reuses it.
            models.UniqueConstraint(
                fields=["hash_algorithm", "hash"],
                condition=models.Q(processed_at__isnull=True),
                name="unique_unprocessed_raw_hash",
            ),
        ]

    def __str__(self) -> str:
        return self.file_name


class PackageSend(ClaimableRun):
    """A package's (or a collection's) destination messages copied to a chat an operator picked, by one account
    that reads the destination and may post there."""

    title = models.CharField(max_length=500)  # what is sent: the package's file name, or the collection's name
    package = models.ForeignKey(Package, null=True, blank=True, on_delete=models.SET_NULL, related_name="sends")
    collection = models.ForeignKey(Collection, null=True, blank=True, on_delete=models.SET_NULL, related_name="sends")
    account = models.ForeignKey("accounts.TelegramAccount", on_delete=models.CASCADE, related_name="package_sends")
    chat = models.ForeignKey("accounts.Chat", on_delete=models.CASCADE, related_name="package_sends")
    topic_id = models.BigIntegerField(null=True, blank=True)
    parts_total = models.PositiveIntegerField(default=0)
    parts_sent = models.PositiveIntegerField(default=0)
    parts_failed = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.title} → {self.chat}"

    @property
    def outcome(self) -> RunOutcome:
        """What the send came to (core.outcomes): stopped before any part was copied or refused (the account
        resting or logged out), it did nothing."""
        if self.status == RunStatus.QUEUED:
            return RunOutcome(Outcome.WAITING, "for a worker, or for this account's other send")
        if self.status in (RunStatus.RUNNING, RunStatus.PAUSED):
            return RunOutcome(Outcome(self.status))
        copied = f"{self.parts_sent} of {self.parts_total} parts copied"
        if self.status == RunStatus.SUCCESS:
            return RunOutcome(Outcome.SUCCESS, copied)
        if self.status == RunStatus.PARTIAL:
            return RunOutcome(Outcome.PARTIAL, copied)
        if not self.parts_sent and not self.parts_failed:
            return RunOutcome(Outcome.IDLE, first_sentence(self.error) or "nothing was copied")
        return RunOutcome(Outcome.FAILED, first_sentence(self.error) or copied)


class PackageSendPart(models.Model):
    """One destination message to copy; its random_id is fixed when the send is made, before anything goes out,
    so a retry after a crash is answered RANDOM_ID_DUPLICATE instead of posting twice."""

    send = models.ForeignKey(PackageSend, on_delete=models.CASCADE, related_name="parts")
    position = models.PositiveIntegerField()
    package = models.ForeignKey(Package, null=True, on_delete=models.SET_NULL, related_name="+")
    from_chat = models.ForeignKey("accounts.Chat", on_delete=models.CASCADE, related_name="+")
    message_id = models.BigIntegerField()
    name = models.CharField(max_length=500)
    # What the recipient reads under the file (fixed with the send): the source caption or the operator's.
    caption = models.TextField(blank=True)
    random_id = models.BigIntegerField()
    sent_message_id = models.BigIntegerField(null=True, blank=True)  # None after a duplicate: sent before
    sent_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["send", "position"]
        constraints = [models.UniqueConstraint(fields=["send", "position"], name="unique_send_part_position")]

    def __str__(self) -> str:
        return self.name


class SkippedFingerprint(models.Model):
    """The operator's word: archives with this listing are copies of `package`, not to be uploaded again."""

    fingerprint = models.CharField(max_length=64, unique=True)
    package = models.ForeignKey(Package, on_delete=models.CASCADE, related_name="skipped_fingerprints")
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.fingerprint


class ChannelPassword(models.Model):
    """A password an operator gave for a source channel's archives, tried on those that need one; sealed like
    sessions (core.crypto), never shown to viewers."""

    chat = models.ForeignKey("accounts.Chat", on_delete=models.CASCADE, related_name="archive_passwords")
    password_sealed = models.TextField()
    # The first and last characters, so an operator can tell the passwords apart without reading them.
    hint = models.CharField(max_length=16)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return self.hint


# -- the members' bot (packages/bot/) ------------------------------------------------------------------------------


class BotAudience(models.TextChoices):
    ALLOW_LIST = "allow_list", "People on the allow-list"
    MEMBERS = "members", "Members of chosen chats"
    EVERYONE = "everyone", "Everyone"


class BotSettings(models.Model):
    """The one bot of the archive: off until an operator turns it on; its token sealed like session keys."""

    enabled = models.BooleanField(default=False)
    token_sealed = models.TextField(blank=True)
    username = models.CharField(max_length=100, blank=True)  # as Telegram said at the last login
    audience = models.CharField(max_length=12, choices=BotAudience.choices, default=BotAudience.ALLOW_LIST)
    allowed_user_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    # "Members of chosen chats": a person in one of these (asked of Telegram by the bot) may use it.
    member_chats = models.ManyToManyField("accounts.Chat", blank=True, related_name="+")
    sends_per_day = models.PositiveIntegerField(default=20)  # packages one person may receive in 24 hours
    # The bot's Telegram session (sealed like accounts') and its update state (pts, qts, date, seq) at its last
    # stop, so a restart asks Telegram for what people wrote meanwhile (updates.getDifference).
    session_sealed = models.TextField(blank=True)
    session_bot_id = models.BigIntegerField(null=True, blank=True)
    update_state = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"@{self.username}" if self.username else "the bot"


class BotPerson(models.Model):
    """Someone who wrote to the bot (Telegram's user id; their name as they last wrote)."""

    user_id = models.BigIntegerField(unique=True)
    first_name = models.CharField(max_length=255, blank=True)
    username = models.CharField(max_length=100, blank=True)
    blocked = models.BooleanField(default=False)
    # The last membership check ("Members of chosen chats"): the chat they were found in, "" for none.
    member_of = models.CharField(max_length=255, blank=True)
    member_checked_at = models.DateTimeField(null=True, blank=True)
    # The newest message of theirs the bot took up: one caught up again after a restart is not answered twice.
    last_message_id = models.BigIntegerField(default=0)
    first_seen_at = models.DateTimeField(default=timezone.now)
    last_seen_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["-last_seen_at"]

    def __str__(self) -> str:
        return f"@{self.username}" if self.username else self.first_name or str(self.user_id)


class BotDeliveryState(models.TextChoices):
    SENDING = "sending", "Sending"
    SENT = "sent", "Sent"
    FAILED = "failed", "Failed"


class BotDelivery(models.Model):
    """A package sent to a person by the bot: the row is made before the send, one per (person, package), so a
    retry or a second press never sends twice."""

    person = models.ForeignKey(BotPerson, on_delete=models.CASCADE, related_name="deliveries")
    package = models.ForeignKey(Package, on_delete=models.CASCADE, related_name="bot_deliveries")
    state = models.CharField(max_length=8, choices=BotDeliveryState.choices, default=BotDeliveryState.SENDING)
    message_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [models.UniqueConstraint(fields=["person", "package"], name="unique_bot_delivery")]

    def __str__(self) -> str:
        return f"{self.package} → {self.person}"


class BotSubscription(models.Model):
    """Words a person asked to be told about: a package that lands and matches is told once."""

    person = models.ForeignKey(BotPerson, on_delete=models.CASCADE, related_name="subscriptions")
    words = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["person", "created_at", "pk"]
        constraints = [models.UniqueConstraint(fields=["person", "words"], name="unique_bot_subscription")]

    def __str__(self) -> str:
        return f"{self.person}: {self.words}"


class BotNotice(models.Model):
    """A subscription told about a package: unique, so it is told once; `told_at` once the message went."""

    subscription = models.ForeignKey(BotSubscription, on_delete=models.CASCADE, related_name="notices")
    package = models.ForeignKey(Package, on_delete=models.CASCADE, related_name="bot_notices")
    created_at = models.DateTimeField(default=timezone.now)
    told_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["subscription", "package"], name="unique_bot_notice")]

    def __str__(self) -> str:
        return f"{self.subscription} → {self.package}"


class BotActivity(models.Model):
    """What the bot did, for the console: a command answered, a send, a refusal, a notice."""

    person = models.ForeignKey(BotPerson, null=True, on_delete=models.SET_NULL, related_name="activity")
    kind = models.CharField(max_length=12)
    text = models.CharField(max_length=300)
    at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-at", "-pk"]

    def __str__(self) -> str:
        return f"{self.kind}: {self.text}"
