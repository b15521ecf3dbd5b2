"""What each channel takes: its kinds, extensions, name pattern and size range, and where it starts.

Pure (no Telegram, no writes): the cycle asks `Rules.left_out` of each archive set it finds; the channel page
and the API read what the operator typed with `size_parse` and `message_link_parse`.
"""

import re
from dataclasses import dataclass
from decimal import Decimal

from core.sizes import size_text
from packages.detection import MODEL, RAR, SEVEN_ZIP, ZIP, ArchiveSet

KINDS = {ZIP: "ZIP", RAR: "RAR", SEVEN_ZIP: "7z", MODEL: "Model files (.stl, .3mf, .pdf, …)"}
NAME_PATTERN_MAX = 300

# Decimal units as Telegram and file managers show sizes; binary ones for those who write them.
_UNITS = {
    "": 1,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
    "k": 1000,
    "m": 1000**2,
    "g": 1000**3,
}
_SIZE = re.compile(r"^(?P<number>\d+(?:[.,]\d+)?)\s*(?P<unit>[a-z]*)$", re.I)
_MESSAGE_LINK = re.compile(
    r"^(?:https?://)?(?:www\.)?(?:t|telegram)\.me/"
    r"(?:c/(?P<chat_id>\d+)|(?P<username>[a-z][a-z0-9_]{3,31}))"
    r"/(?:(?P<topic_id>\d+)/)?(?P<message_id>\d+)/?(?:\?.*)?$",
    re.I,
)


def size_parse(text: str | int | None) -> int | None:
    """Bytes from "500 MB", "1.5 GB", "2 GiB" or a plain number; None for empty. ValueError says what to write."""
    if text is None or (isinstance(text, str) and not text.strip()):
        return None
    if isinstance(text, int) and not isinstance(text, bool):
        if text < 0:
            raise ValueError("A size cannot be negative.")
        return text
    match = _SIZE.match(str(text).strip())
    unit = match.group("unit").lower() if match else ""
    if match is None or unit not in _UNITS:
        raise ValueError(f"“{text}” is not a size: write bytes, or a number with KB, MB, GB or TB (e.g. 500 MB).")
    return int(Decimal(match.group("number").replace(",", ".")) * _UNITS[unit])


def size_exact(size: int | None) -> str:
    """A size to edit, without rounding: "500 MB" when it is a whole number of a unit, else its bytes."""
    if size is None:
        return ""
    for unit, name in ((1000**4, "TB"), (1000**3, "GB"), (1000**2, "MB"), (1000, "KB")):
        if size and size % unit == 0:
            return f"{size // unit} {name}"
    return str(size)


@dataclass(frozen=True)
class MessageLink:
    message_id: int
    chat_id: int | None = None  # t.me/c/<id>/…: the channel's id
    username: str = ""  # t.me/<username>/…
    topic_id: int | None = None


def message_link_parse(text: str) -> MessageLink:
    """t.me/c/<id>/<msg>, t.me/<username>/<msg>, and their topic forms (…/<topic>/<msg>)."""
    match = _MESSAGE_LINK.match((text or "").strip())
    if match is None:
        raise ValueError(
            f"“{text}” is not a message link: copy one from Telegram (Copy Post Link), "
            "like https://t.me/c/1234567890/42 or https://t.me/channelname/42."
        )
    return MessageLink(
        message_id=int(match.group("message_id")),
        chat_id=int(match.group("chat_id")) if match.group("chat_id") else None,
        username=match.group("username") or "",
        topic_id=int(match.group("topic_id")) if match.group("topic_id") else None,
    )


def name_pattern_check(pattern: str) -> str:
    """The pattern, stripped, if it is a valid regular expression; ValueError says where it breaks."""
    pattern = (pattern or "").strip()
    if len(pattern) > NAME_PATTERN_MAX:
        raise ValueError(f"Keep the name pattern under {NAME_PATTERN_MAX} characters.")
    try:
        re.compile(pattern, re.I)
    except re.error as exc:
        raise ValueError(f"The name pattern is not a valid regular expression: {exc}.") from exc
    return pattern


def extensions_parse(text: str | list | tuple) -> list[str]:
    """ "pdf, .gcode  STL" → ["gcode", "pdf", "stl"]."""
    items = text if isinstance(text, list | tuple) else re.split(r"[\s,;]+", text or "")
    found = set()
    for item in items:
        extension = str(item).strip().lstrip(".").lower()
        if not extension:
            continue
        if not re.fullmatch(r"[a-z0-9]{1,10}", extension):
            raise ValueError(f"“{item}” is not a file extension: write them like pdf, gcode, stl.")
        found.add(extension)
    return sorted(found)


def set_extension(archive_set: ArchiveSet) -> str:
    """What the set is, by extension: its archive kind (zip, rar, 7z, whatever its volumes are named) or the
    model file's own extension."""
    if archive_set.archive_type == MODEL:
        return archive_set.file_name.rsplit(".", 1)[-1].lower()
    return archive_set.archive_type


# The Channel fields that hold its rules: the filters, then the start point.
FILTER_FIELDS = ("take_kinds", "take_multi_volume", "leave_extensions", "name_pattern", "min_bytes", "max_bytes")
RULE_FIELDS = (*FILTER_FIELDS, "start_from", "start_date", "start_message_id", "start_message_link")


@dataclass(frozen=True)
class Rules:
    """A channel's filters. Empty kinds: every kind; no size bound: only INGEST_MAX_PACKAGE_BYTES."""

    kinds: tuple[str, ...] = ()
    multi_volume: bool = True
    leave_extensions: tuple[str, ...] = ()
    name_pattern: str = ""
    min_bytes: int | None = None
    max_bytes: int | None = None

    @classmethod
    def of(cls, channel) -> "Rules":
        return cls.of_fields({name: getattr(channel, name) for name in FILTER_FIELDS})

    @classmethod
    def of_fields(cls, fields: dict) -> "Rules":
        """From the channel's field values (`Channel.take_kinds`…), saved or about to be."""
        return cls(
            kinds=tuple(fields["take_kinds"]),
            multi_volume=fields["take_multi_volume"],
            leave_extensions=tuple(fields["leave_extensions"]),
            name_pattern=fields["name_pattern"],
            min_bytes=fields["min_bytes"],
            max_bytes=fields["max_bytes"],
        )

    @property
    def filters(self) -> bool:
        return bool(
            self.kinds
            or not self.multi_volume
            or self.leave_extensions
            or self.name_pattern
            or self.min_bytes is not None
            or self.max_bytes is not None
        )

    def left_out(self, archive_set: ArchiveSet, *, size: int, may_grow: bool = False) -> str:
        """Why the channel does not take this set ("" when it does). A set whose volumes may still come is not
        judged too small yet: it is only left out below the minimum once it is whole."""
        if self.kinds and archive_set.archive_type not in self.kinds:
            return f"{KINDS[archive_set.archive_type]} is not a kind this channel takes"
        extension = set_extension(archive_set)
        if extension in self.leave_extensions:
            return f".{extension} files are left out here"
        volumes = archive_set.is_multipart or archive_set.volumes[0].scheme not in ("single", MODEL)
        if not self.multi_volume and volumes:
            return "sets of several volumes are left out here"
        if self.name_pattern and not re.search(self.name_pattern, archive_set.file_name, re.I):
            return f"the name does not match /{self.name_pattern}/"
        if self.max_bytes is not None and size > self.max_bytes:
            return f"{size_text(size)} is above this channel's {size_text(self.max_bytes)}"
        if self.min_bytes is not None and size < self.min_bytes and not may_grow:
            return f"{size_text(size)} is below this channel's {size_text(self.min_bytes)}"
        return ""
