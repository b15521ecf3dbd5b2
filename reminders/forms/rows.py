"""Parts and groups, the lists the operator edits in place: read from the POST by hand (one `part` per row, in
order, with `part-<n>-kind`, `-text`, `-media`, `-caption` and `-file`; the chosen groups as `targets` (chat ids)
with an optional `topic-<chat id>`), and changed by the buttons on the parts."""

import re
from dataclasses import dataclass, field
from functools import cached_property

from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.utils.safestring import mark_safe

from accounts.models import Chat, ChatTopic
from accounts.selectors import chat_topics
from reminders import selectors, services
from reminders.forms.steps import ALBUM, MEDIA, TEXT
from reminders.models import MediaFile
from reminders.services import PartSpec
from telegram.formatting import PLAIN, FormatError, formatted_html

ACTION_ON_PART = re.compile(r"^(remove|up|down)-(\d+)$")
ALBUM_ITEM_REMOVE = re.compile(r"^unpick-(\d+)-(\d+)$")  # part, item


@dataclass
class PartRow:
    """One part as the operator is editing it: a text, or a media or an album (uploaded or still to upload) +
    caption."""

    kind: str = TEXT
    text: str = ""
    media: MediaFile | None = None
    caption: str = ""
    format: str = PLAIN
    upload: UploadedFile | None = None
    album: list[MediaFile] = field(default_factory=list)
    album_uploads: list[UploadedFile] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    premium: bool = False  # the sending account's: longer captions, custom emoji

    @property
    def spec(self) -> PartSpec:
        if self.kind == MEDIA:
            return PartSpec(text=self.text, media=self.media, caption=self.caption, format=self.format)
        if self.kind == ALBUM:
            return PartSpec(album=self.album, caption=self.caption, format=self.format)
        return PartSpec(text=self.text, format=self.format)

    @cached_property
    def preview(self) -> dict:
        """The part as Telegram will show it (safe HTML), or why Telegram would refuse it."""
        try:
            formatted = services.part_formatted(part=self.spec, premium=self.premium)
        except FormatError as exc:
            return {"html": "", "error": str(exc)}
        # formatted_html escapes every character of the text; only its own tags are markup
        return {"html": mark_safe(formatted_html(formatted)), "error": ""}


@dataclass
class GroupRow:
    chat: Chat
    selected: bool = False
    topic: str = ""  # the topic id as posted; blank is the forum's General topic
    topics: list[ChatTopic] = field(default_factory=list)  # what a forum offers to pick, by title

    @property
    def topic_unknown(self) -> bool:
        """A topic posted that the chat is not known to have (kept in the select, so the error shows it)."""
        return bool(self.topic) and self.topic not in {str(topic.topic_id) for topic in self.topics}


class PartAndGroupRows:
    """The reminder form's part and group rows (a part of `ReminderForm`)."""

    def _part_rows(self) -> list[PartRow]:
        premium = bool(self.sender and self.sender.is_premium)
        if "message" not in self.sections or not self.is_bound:
            if self.current is None:
                return [PartRow(premium=premium)]
            return [
                PartRow(
                    kind=ALBUM if part.album else MEDIA if part.media else TEXT,
                    text=part.text,
                    media=part.media,
                    album=list(part.album),
                    caption=part.caption,
                    format=part.format,
                    premium=premium,
                )
                for part in self.current.parts
            ]
        keys = self.data.getlist("part")
        media_ids = [self.data.get(f"part-{key}-media", "") for key in keys]
        album_ids = {key: [pk for pk in self.data.getlist(f"part-{key}-album") if pk.isdecimal()] for key in keys}
        wanted = [*media_ids, *(pk for ids in album_ids.values() for pk in ids)]
        media = MediaFile.objects.in_bulk([int(pk) for pk in wanted if pk.isdecimal()])
        rows = []
        for key, media_id in zip(keys, media_ids, strict=True):
            kind = self.data.get(f"part-{key}-kind")
            kind = kind if kind in (MEDIA, ALBUM) else TEXT
            text = self.data.get(f"part-{key}-text", "").replace("\r\n", "\n")
            caption = self.data.get(f"part-{key}-caption", "").replace("\r\n", "\n")
            row = PartRow(
                kind=kind,
                text=text if kind == TEXT else "",
                caption=caption if kind != TEXT else "",
                format=self.data.get(f"part-{key}-format", PLAIN),
                premium=premium,
            )
            if kind == MEDIA:
                row.media = media.get(int(media_id)) if media_id.isdecimal() else None
                row.upload = self.files.get(f"part-{key}-file") if self.files else None
            if kind == ALBUM:
                row.album = [media[int(pk)] for pk in album_ids[key] if int(pk) in media]
                row.album_uploads = self.files.getlist(f"part-{key}-files") if self.files else []
            rows.append(row)
        return rows

    def _group_rows(self) -> list[GroupRow]:
        if "groups" not in self.sections or self.sender is None:
            return []
        current = {target.chat.pk: target.topic_id for target in self.current.targets} if self.current else {}
        chats = list(selectors.account_target_chats(account_id=self.sender.pk, include_ids=current))
        topics = chat_topics(chat_ids=[chat.pk for chat in chats if chat.is_forum])
        if not self.is_bound:
            return [
                GroupRow(
                    chat=chat,
                    selected=chat.pk in current,
                    topic=str(current.get(chat.pk) or ""),
                    topics=topics.get(chat.pk, []),
                )
                for chat in chats
            ]
        selected = {int(pk) for pk in self.data.getlist("targets") if pk.isdecimal()}
        return [
            GroupRow(
                chat=chat,
                selected=chat.pk in selected,
                topic=self.data.get(f"topic-{chat.pk}", "").strip(),
                topics=topics.get(chat.pk, []),
            )
            for chat in chats
        ]

    # Actions on the parts -----------------------------------------------------------------------------------------

    def apply(self, action: str) -> None:
        """Store the chosen files, then add, remove or move a part as the button pressed says."""
        for row in self.part_rows:
            for upload in row.album_uploads:
                try:
                    row.album.append(services.media_create(file=upload, name=upload.name))
                except ValidationError as exc:
                    row.errors.extend(f"{upload.name}: {message}" for message in exc.messages)
            row.album_uploads = []
            if row.upload is None:
                continue
            try:
                row.media = services.media_create(file=row.upload, name=row.upload.name)
            except ValidationError as exc:
                row.errors.extend(exc.messages)
            row.upload = None
        rows = self.part_rows
        premium = bool(self.sender and self.sender.is_premium)
        if action == "add-text":
            rows.append(PartRow(kind=TEXT, premium=premium))
        elif action == "add-media":
            rows.append(PartRow(kind=MEDIA, premium=premium))
        elif action == "add-album":
            rows.append(PartRow(kind=ALBUM, premium=premium))
        elif match := ALBUM_ITEM_REMOVE.match(action):
            part, item = int(match.group(1)), int(match.group(2))
            if part < len(rows) and item < len(rows[part].album):
                rows[part].album.pop(item)
        elif match := ACTION_ON_PART.match(action):
            verb, index = match.group(1), int(match.group(2))
            if index >= len(rows):
                return
            if verb == "remove":
                rows.pop(index)
            elif verb == "up" and index > 0:
                rows[index - 1], rows[index] = rows[index], rows[index - 1]
            elif verb == "down" and index + 1 < len(rows):
                rows[index], rows[index + 1] = rows[index + 1], rows[index]
