"""What a listing is made of, the limits it keeps and the checks every format reader shares."""

import re
from dataclasses import dataclass

MAX_ENTRIES = 200_000
# Above this a declared uncompressed size is a zip bomb or a lie: no model archive inflates to a terabyte.
MAX_DECLARED_BYTES = 1024**4
MAX_PATH_CHARS = 4096
MAX_REASON_CHARS = 500

# C0/C1 controls (NUL cannot even be stored in PostgreSQL) and lone surrogates from broken UTF-16 names.
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class Entry:
    path: str
    size: int
    compressed_size: int | None = None
    crc32: int | None = None
    # The archive placed it outside its own folder (../, absolute path) or it is a link: extracting it is risky.
    unsafe: bool = False
    # Its data is encrypted (zip ZipCrypto or AES, 7z AES, rar): listed, but it needs a password to extract.
    encrypted: bool = False
    # A zip entry's local header, from the start of the archive: one file is read out of it by ranged reads.
    header_offset: int | None = None


@dataclass(frozen=True)
class RemoteVolume:
    """A volume read where it is kept (an object store), by ranged GETs to a signed link."""

    name: str
    url: str
    size: int


class ListingError(Exception):
    """The listing is unavailable; the message says why."""

    needs_password = False


class PasswordProtected(ListingError):
    needs_password = True


@dataclass(frozen=True)
class Thumbnail:
    """A JPEG thumbnail of an image inside the archive, or of its main model, made in the listing child."""

    path: str
    jpeg: bytes
    width: int
    height: int
    # image: a picture inside the archive; embedded: a 3MF's own picture; render: drawn of the model's mesh.
    kind: str = "image"


@dataclass(frozen=True)
class ArchiveListing:
    """What the listing child read of one archive set: its entries and thumbnails of images inside."""

    entries: list[Entry]
    thumbnails: list[Thumbnail]
    # Which of the offered passwords opened it (its encrypted headers, or its smallest encrypted file); None: none
    # was needed, none did, or it could not be checked.
    password_index: int | None = None
    # Why the main model got no preview (hostile, huge, empty, unreadable); "" when it got one or there is none.
    model_preview_refused: str = ""
    # What the child used: its CPU time and its peak resident memory.
    cpu_seconds: float = 0.0
    peak_memory_bytes: int = 0


@dataclass(frozen=True)
class Limits:
    max_entries: int
    max_declared_bytes: int


def safe_path(raw: str) -> tuple[str, bool]:
    """An entry path fit to store and show, and whether it pointed outside the archive.

    Backslashes count as separators (Windows extractors treat them so); `..`, `.`, empty parts, a leading
    slash and a drive letter are dropped, the way a careful extractor would place the entry.
    """
    text = _UNPRINTABLE.sub("\ufffd", raw).replace("\\", "/")
    escapes = text.startswith("/") or bool(_DRIVE.match(text))
    text = _DRIVE.sub("", text)
    kept: list[str] = []
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if kept:
                kept.pop()
            else:
                escapes = True
            continue
        kept.append(part)
    path = "/".join(kept) or "\ufffd"
    if len(path) > MAX_PATH_CHARS:
        path = path[: MAX_PATH_CHARS - 1] + "…"
    return path, escapes


def reason_text(text: str) -> str:
    """An error text fit to store: archive parsers quote hostile names in their messages."""
    text = _UNPRINTABLE.sub("\ufffd", text)
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…"


def entry_make(
    raw_path: str,
    size,
    compressed,
    crc,
    *,
    link: bool,
    limits: Limits,
    encrypted: bool = False,
    header_offset: int | None = None,
) -> Entry:
    path, escapes = safe_path(raw_path)
    size = size or 0
    if not 0 <= size <= limits.max_declared_bytes:
        raise ListingError(
            f"The archive declares an entry of {size} bytes uncompressed, above the limit of "
            f"{limits.max_declared_bytes} bytes (a zip bomb, or a damaged header)."
        )
    if compressed is not None and not 0 <= compressed <= limits.max_declared_bytes:
        compressed = None
    return Entry(
        path=path,
        size=size,
        compressed_size=compressed,
        crc32=crc,
        unsafe=escapes or link,
        encrypted=encrypted,
        header_offset=header_offset,
    )


def entries_check(entries: list[Entry], limits: Limits) -> list[Entry]:
    if len(entries) > limits.max_entries:
        raise ListingError(f"The archive lists {len(entries)} entries, above the limit of {limits.max_entries}.")
    total = sum(entry.size for entry in entries)
    if total > limits.max_declared_bytes:
        raise ListingError(
            f"The archive declares {total} bytes uncompressed, above the limit of {limits.max_declared_bytes} "
            "bytes (a zip bomb, or a damaged header)."
        )
    return entries


def entry_count_check(count: int, limits: Limits) -> None:
    """Refuse before parsing: the headers say how many entries follow."""
    if count > limits.max_entries:
        raise ListingError(f"The archive lists {count} entries, above the limit of {limits.max_entries}.")
