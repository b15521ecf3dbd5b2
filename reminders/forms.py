"""The reminder form, shared by the compose wizard (Message → Groups → When → Review) and the edit pages
(one section each).

Parts and groups are lists the operator edits in place, so they are read from the POST by hand: one
`part` per row, in order, with `part-<n>-kind`, `-text`, `-media`, `-caption` and `-file`; the chosen
groups as `targets` (chat ids) with an optional `topic-<chat id>`. The rest is an ordinary Django form.
The rules are the services' (reminder_validate): their errors land under the field they name.

Why this size: one form serves the wizard's four steps and every edit page; fields and checks stay together.
"""

import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cache, cached_property
from zoneinfo import available_timezones

from django import forms
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import UploadedFile
from django.utils.safestring import mark_safe

from accounts.models import Chat, ChatTopic, TelegramAccount
from accounts.selectors import chat_topics
from core.forms import item_errors
from reminders import selectors, services
from reminders.media_types import ACCEPTED_TEXT
from reminders.models import Audience, MediaFile, Reminder
from reminders.schedule import zone
from reminders.services import PartSpec, ReminderSpec, TargetSpec
from telegram.formatting import PLAIN, FormatError, formatted_html

STEPS = (("message", "Message"), ("groups", "Groups"), ("when", "When"), ("review", "Review"))
STEP_KEYS = tuple(key for key, _ in STEPS)
SECTIONS = ("message", "groups", "when")  # the steps that hold fields; review only shows them
# The section of each field, and of each key of the services' ValidationError.
SECTION_OF = {
    "name": "message",
    "account": "message",
    "parts": "message",
    "targets": "groups",
    "audiences": "groups",
    "timezone": "when",
    "window_start_hour": "when",
    "window_end_hour": "when",
    "schedule": "when",
    "crontab": "when",
    "at": "when",
    "enabled": "when",
    "auto_resume": "when",
    "silent": "message",
    "link_preview": "message",
    "pin": "message",
    "replace_previous": "message",
    "edit_in_place": "message",
}
TEXT, MEDIA, ALBUM = "text", "media", "album"
CRONTAB, ONCE, MANUAL = "crontab", "once", "manual"
CRONTAB_PRESETS = (
    ("0 9 * * *", "Every day at 09:00"),
    ("0 9 * * 1-5", "Weekdays at 09:00"),
    ("0 10 * * 1", "Mondays at 10:00"),
    ("0 12 * * 6,0", "Weekends at 12:00"),
    ("0 9,15 * * *", "Twice a day, 09:00 and 15:00"),
    ("0 9 1 * *", "The 1st of each month at 09:00"),
)
DEFAULT_CRONTAB = CRONTAB_PRESETS[0][0]
AT_FORMAT = "%Y-%m-%dT%H:%M"  # what <input type="datetime-local"> sends
ACTION_ON_PART = re.compile(r"^(remove|up|down)-(\d+)$")
ALBUM_ITEM_REMOVE = re.compile(r"^unpick-(\d+)-(\d+)$")  # part, item


@cache
def zone_choices() -> list[tuple[str, str]]:
    names = []
    for name in sorted(available_timezones()):
        try:
            zone(name)
        except ValueError:
            continue
        names.append((name, name.replace("_", " ")))
    return names


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def account_label(account: TelegramAccount) -> str:
    label = f"{account.display_name} ({account.phone})" if account.display_name else account.phone
    return label if account.is_authenticated_account else f"{label} — {account.get_auth_state_display().lower()}"


class AccountChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: TelegramAccount) -> str:
        return account_label(obj)


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


def _hours(first: int, last: int) -> list[tuple[int, str]]:
    return [(hour, "24:00 (midnight)" if hour == 24 else f"{hour:02d}:00") for hour in range(first, last + 1)]


class ReminderForm(forms.Form):
    name = forms.CharField(
        label="Name",
        max_length=200,
        required=False,
        # its one rule is "filled": the page drops "Give the reminder a name." as soon as it is (reminders.js)
        widget=forms.TextInput(
            attrs={"placeholder": "e.g. Weekly promo", "autocomplete": "off", "data-error-clears": "filled"}
        ),
    )
    account = AccountChoiceField(
        queryset=TelegramAccount.objects.order_by("display_name", "phone"),
        required=False,
        label="Send from",
        empty_label="Choose an account",
        help_text="The Telegram account that posts it; the groups are the ones it is in.",
        widget=forms.Select(attrs={"class": "select"}),
    )
    timezone = forms.CharField(label="Time zone", widget=forms.Select(attrs={"class": "select"}))
    window_start_hour = forms.TypedChoiceField(
        label="Window opens", coerce=int, choices=_hours(0, 23), widget=forms.Select(attrs={"class": "select"})
    )
    window_end_hour = forms.TypedChoiceField(
        label="Window closes", coerce=int, choices=_hours(1, 24), widget=forms.Select(attrs={"class": "select"})
    )
    schedule = forms.ChoiceField(
        label="Schedule",
        choices=[(CRONTAB, "Repeat"), (ONCE, "Once"), (MANUAL, "Only when I press Send now")],
        widget=forms.RadioSelect,
    )
    crontab = forms.CharField(
        label="Crontab",
        max_length=120,
        required=False,
        help_text="minute hour day month weekday, in the reminder's time zone",
        widget=forms.TextInput(attrs={"class": "mono", "autocomplete": "off", "spellcheck": "false"}),
    )
    at = forms.CharField(label="Send at", required=False, widget=forms.DateTimeInput(attrs={"type": "datetime-local"}))
    enabled = forms.BooleanField(label="On: it sends by itself on its schedule", required=False)
    auto_resume = forms.BooleanField(
        label="Auto-resume: a paused run goes on by itself when the window next opens", required=False
    )

    silent = forms.BooleanField(label="Silent: members get no notification", required=False)
    link_preview = forms.BooleanField(label="Link preview: Telegram shows the first link's page", required=False)
    pin = forms.BooleanField(label="Pin it in each group (the previous run's post is unpinned)", required=False)
    replace_previous = forms.BooleanField(
        label="Replace the previous run's post: it is deleted in each group before this one goes out", required=False
    )
    edit_in_place = forms.BooleanField(
        label="… or edited in place where the parts allow (text to text, one media to one media)", required=False
    )

    def __init__(self, data=None, files=None, *, sections=SECTIONS, reminder: Reminder | None = None, initial=None):
        self.reminder = reminder
        self.current = selectors.reminder_spec(reminder=reminder) if reminder is not None else None
        if initial is None and self.current is not None:
            initial = self._initial_from(self.current)
        super().__init__(data, files, initial=initial)
        self.sections = tuple(sections)
        for name in list(self.fields):
            if SECTION_OF[name] not in self.sections or (name == "account" and reminder is not None):
                del self.fields[name]
        if "timezone" in self.fields:
            self.fields["timezone"].widget.choices = zone_choices()
        self.sender = self._sender()
        self.part_rows = self._part_rows()
        self.group_rows = self._group_rows()
        self.part_errors: list[str] = []
        self.target_errors: list[str] = []

    # Reading what was posted --------------------------------------------------------------------------------------

    @staticmethod
    def _initial_from(spec: ReminderSpec) -> dict:
        tz = zone(spec.timezone)
        schedule = CRONTAB if spec.schedule_crontab else ONCE if spec.schedule_at else MANUAL
        return {
            "name": spec.name,
            "timezone": spec.timezone,
            "window_start_hour": spec.window_start_hour,
            "window_end_hour": spec.window_end_hour,
            "schedule": schedule,
            "crontab": spec.schedule_crontab or DEFAULT_CRONTAB,
            "at": spec.schedule_at.astimezone(tz).strftime(AT_FORMAT) if spec.schedule_at else "",
            "enabled": spec.enabled,
            "auto_resume": spec.auto_resume,
            "silent": spec.silent,
            "link_preview": spec.link_preview,
            "pin": spec.pin,
            "replace_previous": spec.replace_previous,
            "edit_in_place": spec.edit_in_place,
        }

    def _sender(self) -> TelegramAccount | None:
        if self.reminder is not None:
            return self.reminder.account
        value = self.data.get("account", "") if self.is_bound else self.initial.get("account")
        if isinstance(value, TelegramAccount):
            return value
        value = str(value or "")
        return TelegramAccount.objects.filter(pk=value).first() if value.isdecimal() else None

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

    # What it amounts to -------------------------------------------------------------------------------------------

    def _cleaned(self, name: str, default):
        """A field's value as the form holds it, so the summary matches what the operator sees: its clean
        value, even when the services refused it (their error takes it out of cleaned_data); a value that
        does not clean at all, or a field not on this page, falls back to the current reminder's, else
        `default`."""
        if not self.is_bound:
            return self.initial.get(name, default)
        self.is_valid()
        if name in self.cleaned_data or name not in self.fields:
            return self.cleaned_data.get(name, default)
        field = self.fields[name]
        try:
            return field.clean(field.widget.value_from_datadict(self.data, self.files, self.add_prefix(name)))
        except ValidationError:
            return default

    def schedule_at(self) -> datetime | None:
        """The one-off time typed in the reminder's own zone; None when it cannot be read (yet)."""
        raw = (self._cleaned("at", "") or "").strip()
        try:
            tz = zone(self._cleaned("timezone", ""))
            return datetime.strptime(raw, AT_FORMAT).replace(tzinfo=tz)
        except ValueError:
            return None

    def part_specs(self) -> list[PartSpec]:
        return [row.spec for row in self.part_rows]

    def target_specs(self) -> list[TargetSpec]:
        targets = []
        for row in self.group_rows:
            if not row.selected:
                continue
            topic = int(row.topic) if row.topic.isdecimal() and int(row.topic) > 0 else None
            targets.append(TargetSpec(chat=row.chat, topic_id=topic))
        return targets

    @cached_property
    def audience_rows(self) -> list[tuple[Audience, bool]]:
        """The sender's audiences, each with whether it is picked."""
        if self.sender is None:
            return []
        if self.is_bound:
            picked = {int(pk) for pk in self.data.getlist("audiences") if pk.isdecimal()}
        else:
            picked = {audience.pk for audience in self.current.audiences} if self.current else set()
        audiences = selectors.audience_list(account=self.sender)
        return [(audience, audience.pk in picked) for audience in audiences]

    def spec(self) -> ReminderSpec | None:
        """What the operator has entered so far, for the services; None until there is an account."""
        if self.sender is None:
            return None
        spec = self.current or ReminderSpec(
            account=self.sender, name="", timezone="UTC", window_start_hour=9, window_end_hour=18, parts=[], targets=[]
        )
        changes = {}
        if "message" in self.sections:
            changes.update(
                name=self._cleaned("name", ""),
                account=self.sender,
                parts=self.part_specs(),
                silent=self._cleaned("silent", spec.silent),
                link_preview=self._cleaned("link_preview", spec.link_preview),
                pin=self._cleaned("pin", spec.pin),
                replace_previous=self._cleaned("replace_previous", spec.replace_previous),
                edit_in_place=self._cleaned("edit_in_place", spec.edit_in_place),
            )
        if "groups" in self.sections:
            changes.update(
                targets=self.target_specs(), audiences=[audience for audience, picked in self.audience_rows if picked]
            )
        if "when" in self.sections:
            kind = self._cleaned("schedule", MANUAL)
            changes.update(
                timezone=self._cleaned("timezone", spec.timezone),
                window_start_hour=self._cleaned("window_start_hour", spec.window_start_hour),
                window_end_hour=self._cleaned("window_end_hour", spec.window_end_hour),
                schedule_crontab=" ".join(self._cleaned("crontab", "").split()) if kind == CRONTAB else "",
                schedule_at=self.schedule_at() if kind == ONCE else None,
                enabled=self._cleaned("enabled", spec.enabled),
                auto_resume=self._cleaned("auto_resume", spec.auto_resume),
            )
        return replace(spec, **changes)

    # Checking -----------------------------------------------------------------------------------------------------

    def check(self, sections=None) -> bool:
        """The services' rules for these sections (all of this page's by default); True when they hold."""
        sections = tuple(sections or self.sections)
        self.is_valid()
        if "message" in sections and self.sender is None and "account" in self.fields:
            self.add_error("account", "Choose the account that sends it.")
        if "message" in sections:
            for row in self.part_rows:
                if row.errors:
                    continue
                if row.kind == MEDIA and row.media is None:
                    row.errors.append("Choose a picture or file to upload.")
                elif row.kind == ALBUM and len(row.album) < 2:
                    row.errors.append("Choose 2 to 10 pictures or files for the album.")
                elif row.kind == TEXT and not row.text.strip():
                    row.errors.append("Write the text, or remove this part.")
        if "groups" in sections:
            for row in self.group_rows:
                if row.selected and row.topic and not (row.topic.isdecimal() and int(row.topic) > 0):
                    self.target_errors.append(f"“{row.chat.title}”: pick one of its topics, or General.")
        if "when" in sections and "schedule" in self.cleaned_data:
            kind = self.cleaned_data["schedule"]
            if kind == CRONTAB and not self.cleaned_data.get("crontab", "").strip():
                self.add_error("schedule", "Pick a preset or write a crontab, e.g. 0 9 * * 1-5.")
            elif kind == ONCE and self.schedule_at() is None and not self.has_error("timezone"):
                self.add_error("schedule", "Pick the day and time to send it.")
        spec = self.spec()
        if spec is not None:
            try:
                services.reminder_validate(spec=spec, current=self.reminder)
            except ValidationError as exc:
                self.add_service_errors(exc, sections)
        return not self.has_errors_in(sections)

    def add_service_errors(self, exc: ValidationError, sections=None) -> None:
        """Put each of the services' messages where the operator sees it: under its field, on its part row,
        or above the form when its field is not on this page."""
        sections = tuple(sections or SECTIONS)
        errors = exc.error_dict if hasattr(exc, "error_dict") else {None: exc.error_list}
        for key, items in errors.items():
            section = SECTION_OF.get(key)
            if section is not None and section not in sections:
                continue
            texts = [text for error in items for text in error.messages]
            if section is None or section not in self.sections:
                for text in texts:
                    self.add_error(None, text)
            elif key == "parts":
                for index, text in item_errors(items):
                    if index is not None and index < len(self.part_rows):
                        row = self.part_rows[index]
                        if not row.errors:  # "choose a file" says more than the services' "give a text or a media"
                            row.errors.append(_sentence(text))
                    else:
                        self.part_errors.append(text)
            elif key in ("targets", "audiences"):
                self.target_errors.extend(
                    text if index is None else _sentence(text) for index, text in item_errors(items)
                )
            elif key in self.fields and not self.has_error(key):
                self.add_error(key, texts)

    def section_has_errors(self, section: str) -> bool:
        if any(SECTION_OF.get(name) == section for name in self.errors):
            return True
        if section == "message":
            return bool(self.part_errors) or any(row.errors for row in self.part_rows)
        if section == "groups":
            return bool(self.target_errors)
        return False

    def has_errors_in(self, sections) -> bool:
        return bool(self.non_field_errors()) or any(self.section_has_errors(section) for section in sections)

    def first_section_with_errors(self) -> str | None:
        return next((section for section in self.sections if self.section_has_errors(section)), None)

    # For the template ---------------------------------------------------------------------------------------------

    @property
    def selected_count(self) -> int:
        return sum(row.selected for row in self.group_rows)

    @property
    def crontab_presets(self):
        return CRONTAB_PRESETS

    @property
    def media_accepted(self) -> str:
        return ACCEPTED_TEXT
