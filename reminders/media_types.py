"""What a reminder's media is, judged by its bytes (never by its name or the browser's word), and how large
Telegram lets it be.

Pictures are opened with Pillow and sent as photos (at most 10 MB, as Telegram's photos); everything else
must be one of the video, audio or document types below, sent as a file (at most 2 GB, 4 GB from a
Premium account). Programs and scripts are refused whatever they are called.
"""

import warnings
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from PIL import Image, UnidentifiedImageError

from core.sizes import size_text
from telegram.records import PREMIUM_UPLOAD_MAX_BYTES, UPLOAD_MAX_BYTES

PHOTO_MAX_BYTES = 10 * 1024 * 1024
# Telegram refuses photos whose sides add up to more, or whose sides differ more than this ratio.
PHOTO_MAX_SIDES = 10_000
PHOTO_MAX_RATIO = 20
PHOTO_FORMATS = {"JPEG": "image/jpeg", "PNG": "image/png", "WEBP": "image/webp"}
PICTURE_EXTENSIONS = {"png", "jpg", "jpeg", "webp"}
SNIFF_BYTES = 4096  # enough to tell a text file from a binary one

PHOTO, VIDEO, AUDIO, DOCUMENT = "photo", "video", "audio", "document"


@dataclass(frozen=True)
class FileType:
    kind: str
    mime_type: str
    label: str


def _ftyp(head: bytes) -> bytes:
    return head[8:12] if head[4:8] == b"ftyp" else b""


# (test on the first bytes, type): checked in order.
FILE_TYPES = [
    (lambda h: _ftyp(h) in (b"M4A ", b"M4B "), FileType(AUDIO, "audio/mp4", "M4A")),
    (lambda h: _ftyp(h) == b"qt  ", FileType(VIDEO, "video/quicktime", "MOV")),
    (lambda h: bool(_ftyp(h)), FileType(VIDEO, "video/mp4", "MP4")),
    (lambda h: h.startswith(b"\x1a\x45\xdf\xa3"), FileType(VIDEO, "video/webm", "WebM/MKV")),
    (lambda h: h.startswith(b"GIF87a") or h.startswith(b"GIF89a"), FileType(VIDEO, "image/gif", "GIF")),
    (lambda h: h.startswith(b"ID3") or h[:2] in (b"\xff\xfb", b"\xff\xf3"), FileType(AUDIO, "audio/mpeg", "MP3")),
    (lambda h: h.startswith(b"OggS"), FileType(AUDIO, "audio/ogg", "Ogg")),
    (lambda h: h.startswith(b"%PDF-"), FileType(DOCUMENT, "application/pdf", "PDF")),
    (lambda h: h.startswith(b"PK\x03\x04"), FileType(DOCUMENT, "application/zip", "ZIP and Office files")),
    (lambda h: h.startswith(b"7z\xbc\xaf\x27\x1c"), FileType(DOCUMENT, "application/x-7z-compressed", "7z")),
    (lambda h: h.startswith(b"Rar!\x1a\x07"), FileType(DOCUMENT, "application/vnd.rar", "RAR")),
]
ACCEPTED_TEXT = (
    "Pictures (JPEG, PNG, WebP) up to 10 MB are sent as photos. Files up to 2 GB (4 GB from a Premium account): "
    + "; ".join(
        f"{kind} ({', '.join(file_type.label for _, file_type in FILE_TYPES if file_type.kind == key)})"
        for key, kind in ((VIDEO, "video"), (AUDIO, "audio"), (DOCUMENT, "documents"))
    )
    + "; and plain text (.txt, .csv)."
)
# Programs and scripts: Telegram would pass them on, a group's members should not get them from us.
REFUSED = [
    (b"MZ", "a Windows program"),
    (b"\x7fELF", "a Linux program"),
    (b"\xcf\xfa\xed\xfe", "a macOS program"),
    (b"\xca\xfe\xba\xbe", "a macOS or Java program"),
    (b"#!", "a script"),
]


def _photo(file) -> FileType | None:
    """A picture Pillow can read fully; None when the bytes are not a picture at all."""
    file.seek(0)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(file) as image:
                image_format, (width, height) = image.format, image.size
                image.verify()
    except UnidentifiedImageError:
        return None
    except (Image.DecompressionBombWarning, Image.DecompressionBombError):
        raise ValidationError(
            {"file": "The picture has far more pixels than Telegram takes (sides adding up to 10000 at most)."}
        ) from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise ValidationError({"file": f"The picture is damaged and cannot be read ({exc})."}) from None
    finally:
        file.seek(0)
    if image_format not in PHOTO_FORMATS:
        return None
    if width + height > PHOTO_MAX_SIDES or max(width, height) > PHOTO_MAX_RATIO * min(width, height):
        raise ValidationError(
            {
                "file": f"The picture is {width}×{height} pixels; Telegram takes photos whose sides add up to at "
                f"most {PHOTO_MAX_SIDES} and are at most {PHOTO_MAX_RATIO} times longer one way than the other."
            }
        )
    return FileType(PHOTO, PHOTO_FORMATS[image_format], image_format)


def _is_text(head: bytes) -> bool:
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start > len(head) - 4  # a character cut off at the end of the sample
    return b"\x00" not in head


def media_type(*, file, name: str, size: int) -> FileType:
    """The accepted type of an uploaded file, by content; ValidationError (key `file`) says why not."""
    file.seek(0)
    head = file.read(SNIFF_BYTES)
    file.seek(0)
    for magic, what in REFUSED:
        if head.startswith(magic):
            raise ValidationError({"file": f"{name} is {what}; programs and scripts are not sent to groups."})
    photo = _photo(file)
    if photo is not None:
        if size > PHOTO_MAX_BYTES:
            raise ValidationError(
                {
                    "file": f"The picture is {size_text(size)}; Telegram takes photos up to "
                    f"{size_text(PHOTO_MAX_BYTES)}. Make it smaller, or send it inside a ZIP as a file."
                }
            )
        return photo
    extension = name.rsplit(".", 1)[-1].lower() if "." in name else ""
    if extension in PICTURE_EXTENSIONS:
        # A group would get a "picture" that does not open: the name promises what the bytes are not.
        raise ValidationError(
            {"file": f"{name} is named .{extension}, but its bytes are not a picture. {ACCEPTED_TEXT}"}
        )
    found = next((file_type for test, file_type in FILE_TYPES if test(head)), None)
    if found is None and _is_text(head):
        found = FileType(DOCUMENT, "text/plain", "text")
    if found is None:
        raise ValidationError({"file": f"{name} is not a type Stashcast sends. {ACCEPTED_TEXT}"})
    if size > PREMIUM_UPLOAD_MAX_BYTES:
        raise ValidationError(
            {
                "file": f"The file is {size_text(size)}; "
                f"Telegram takes files up to {size_text(PREMIUM_UPLOAD_MAX_BYTES)} (Premium)."
            }
        )
    return found


def media_fits_account(*, size: int, upload_limit_bytes: int) -> str:
    """'' when the account may send a file this large; else what to do."""
    if size <= upload_limit_bytes:
        return ""
    return (
        f"the file is {size_text(size)} and this account sends at most {size_text(upload_limit_bytes)} "
        f"(Telegram: {size_text(UPLOAD_MAX_BYTES)}, {size_text(PREMIUM_UPLOAD_MAX_BYTES)} with Premium)"
    )
