"""Small frozen records that cross the gateway seam (never Telethon objects)."""

from dataclasses import dataclass, field
from datetime import datetime

# Telegram's limits, in one place.
UPLOAD_MAX_BYTES = 2_097_152_000  # 4000 parts of 512 KiB
PREMIUM_UPLOAD_MAX_BYTES = 4_194_304_000  # 8000 parts
PART_SIZE = 512 * 1024  # Telegram's file part size for big transfers
LAST_MESSAGE_BATCH = 100  # chats per GetPeerDialogs request
TOPICS_PAGE = 100
HISTORY_PAGE = 100
TEXT_MAX = 4096  # UTF-16 code units in a message (an emoji outside the BMP counts 2)
CAPTION_MAX = 1024  # UTF-16 code units in a media caption (non-Premium)
PREMIUM_CAPTION_MAX = 2048
ENTITIES_MAX = 100  # formatting entities in one message
ALBUM_MAX = 10  # media in one album (2 at least)
TOPIC_ID_MAX = 2**31 - 1
CHANNEL = "channel"
SUPERGROUP = "supergroup"
GROUP = "group"
USER = "user"  # a person the account has a private chat with: the chat's id is the person's user id
CHAT_TYPES = (CHANNEL, SUPERGROUP, GROUP, USER)
SELF = "self"  # the account's own Saved Messages: addressed as itself, never stored as a chat
GENERAL_TOPIC_ID = 1


@dataclass(frozen=True)
class AccountInfo:
    user_id: int
    phone: str
    first_name: str
    last_name: str = ""
    username: str = ""
    premium: bool = False
    upload_max_bytes: int = UPLOAD_MAX_BYTES

    @property
    def display_name(self) -> str:
        return " ".join(part for part in (self.first_name, self.last_name) if part) or self.phone


@dataclass(frozen=True)
class ChatRef:
    """How a chat is addressed: stored (id, access_hash), never a username."""

    id: int
    access_hash: int = 0
    type: str = CHANNEL


SAVED_MESSAGES = ChatRef(id=0, type=SELF)


@dataclass(frozen=True)
class ChatInfo:
    id: int
    access_hash: int
    title: str
    type: str
    forum: bool = False
    slow_mode_seconds: int = 0
    can_post: bool = False
    username: str = ""  # a person's or a public channel's @username, when it has one
    members_count: int | None = None  # as Telegram last said; None when it did not

    @property
    def ref(self) -> ChatRef:
        return ChatRef(id=self.id, access_hash=self.access_hash, type=self.type)


@dataclass(frozen=True)
class TopicInfo:
    id: int
    title: str
    top_message_id: int = 0


@dataclass(frozen=True)
class DocumentInfo:
    """A Telegram document; `location` is the adapter's opaque handle for downloads."""

    id: int
    name: str
    size: int
    mime_type: str = "application/octet-stream"
    location: dict = field(default_factory=dict, compare=False, hash=False)


@dataclass(frozen=True)
class DocumentMessage:
    chat_id: int
    id: int
    date: datetime
    topic_id: int | None
    text: str
    document: DocumentInfo | None
    # A photo's largest size, as a DocumentInfo ("photo.jpg", image/jpeg) that iter_download reads.
    photo: DocumentInfo | None = None
    grouped_id: int | None = None  # the album it was posted in
    reply_to_id: int | None = None  # the message it answers (not the forum topic it is in)
    edit_date: datetime | None = None  # when the post was last edited (its file replaced, or its caption)


@dataclass(frozen=True)
class DocumentPage:
    """One page of a search, newest first; `next_offset_id` continues it (None: nothing older is left)."""

    messages: list[DocumentMessage]
    next_offset_id: int | None


@dataclass(frozen=True)
class SentMessage:
    chat_id: int
    id: int | None  # None when Telegram answered RANDOM_ID_DUPLICATE: sent before
    random_id: int
    date: datetime | None = None
    duplicate: bool = False
    album_ids: tuple[int, ...] = ()  # an album's other messages, after `id`


@dataclass(frozen=True)
class MediaHandle:
    """An uploaded media, reusable for every send of this account (JSON-safe payload)."""

    kind: str  # "photo" or "document"
    payload: dict


# What a join came to (JoinResult.status).
JOINED = "joined"
ALREADY_MEMBER = "already_member"
REQUESTED = "requested"  # the chat approves members: a join request now waits for its admins


@dataclass(frozen=True)
class ChatLink:
    """A chat as an operator names it: a public @username, or the hash of an invite link (telegram.links)."""

    username: str = ""
    invite_hash: str = ""

    def __str__(self) -> str:
        return f"@{self.username}" if self.username else f"t.me/+{self.invite_hash}"


@dataclass(frozen=True)
class ChatPreview:
    """What Telegram tells about a chat before joining it."""

    title: str
    type: str
    members_count: int | None
    forum: bool | None  # None: an invite to a private chat does not say
    already_member: bool
    request_needed: bool = False  # its admins approve each join
    username: str = ""


@dataclass(frozen=True)
class JoinResult:
    status: str  # JOINED, ALREADY_MEMBER or REQUESTED
    chat: ChatInfo | None  # None while a join request waits


def utf16_units(text: str) -> int:
    """A text's length as Telegram counts it for its limits: UTF-16 code units (an emoji is often two)."""
    return len(text.encode("utf-16-le")) // 2


@dataclass(frozen=True)
class MessageEntity:
    """A formatting span of a message: offset and length in UTF-16 code units, as Telegram counts them."""

    type: str  # bold, italic, underline, strike, spoiler, code, pre, text_url, blockquote, custom_emoji, ...
    offset: int
    length: int
    url: str = ""  # text_url
    language: str = ""  # pre
    document_id: int = 0  # custom_emoji


def album_random_id(random_id: int, index: int) -> int:
    """The random_id of an album's item: the album's own, then the next ones (kept a signed 64-bit number)."""
    return (random_id + index + 2**63) % 2**64 - 2**63
