"""A reminder's part as Telegram takes it, and how one goes to one chat: shared by the fan-out and the test send."""

import shutil
from dataclasses import dataclass
from pathlib import Path

from reminders import services
from reminders.models import MediaFile
from telegram.formatting import PLAIN, FormattedText
from telegram.gateway import TelegramGateway
from telegram.records import ChatRef, MediaHandle, SentMessage


@dataclass(frozen=True)
class Part:
    formatted: FormattedText  # the text, or the caption of the media, as Telegram takes it
    media: MediaFile | None
    album: tuple[MediaFile, ...] = ()  # sent as one album (one request) instead of `media`

    @property
    def files(self) -> tuple[MediaFile, ...]:
        """What the part uploads: its media, then its album's (a part has one or the other)."""
        return (self.media, *self.album) if self.media else self.album


def part_build(*, part: dict, media: dict[int, MediaFile], premium: bool) -> Part:
    """One part as fired (text, media, caption, format, album) as Telegram takes it; FormatError when its text
    is one Telegram would refuse from this account."""
    album = tuple(media[media_id] for media_id in part.get("album", []) if media_id in media)
    spec = services.PartSpec(
        text=part["text"],
        media=media.get(part["media"]),
        caption=part["caption"],
        format=part.get("format", PLAIN),
        album=album,
    )
    return Part(formatted=services.part_formatted(part=spec, premium=premium), media=spec.media, album=album)


async def part_send(
    gateway: TelegramGateway,
    ref: ChatRef,
    part: Part,
    *,
    random_id: int,
    media: MediaHandle | None,
    album: list[MediaHandle],
    topic_id: int | None,
    options: dict,
) -> SentMessage:
    """One part to one chat, as every group gets it (and a test send shows it): an album in one request, else
    one message; silent and link preview as the reminder says."""
    silent = bool(options.get("silent"))
    if album:
        return await gateway.send_album(
            ref,
            random_id=random_id,
            media=album,
            text=part.formatted.text,
            entities=part.formatted.entities,
            topic_id=topic_id,
            silent=silent,
        )
    return await gateway.send_message(
        ref,
        random_id=random_id,
        text=part.formatted.text,
        entities=part.formatted.entities,
        media=media,
        topic_id=topic_id,
        silent=silent,
        link_preview=options.get("link_preview", True),
    )


def media_local_path(*, media: MediaFile, temp_dir: Path) -> str:
    """A file on disk for the upload: the stored file itself, or a copy from a remote storage into temp_dir."""
    try:
        return media.file.path
    except NotImplementedError:
        path = temp_dir / f"{media.pk}-{Path(media.name).name}"
        with media.file.open("rb") as source, open(path, "wb") as copy:
            shutil.copyfileobj(source, copy)
        return str(path)
