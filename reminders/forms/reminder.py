"""The reminder form, shared by the compose wizard and the edit pages (one section each): its ordinary fields, what
the operator has entered so far as a ReminderSpec, and what the template reads."""

from dataclasses import replace
from datetime import datetime
from functools import cached_property

from django import forms
from django.core.exceptions import ValidationError

from accounts.models import TelegramAccount
from reminders import selectors
from reminders.forms.checks import ReminderChecks
from reminders.forms.rows import PartAndGroupRows
from reminders.forms.steps import (
    AT_FORMAT,
    CRONTAB,
    CRONTAB_PRESETS,
    DEFAULT_CRONTAB,
    MANUAL,
    ONCE,
    SECTION_OF,
    SECTIONS,
    AccountChoiceField,
    hours,
    zone_choices,
)
from reminders.media_types import ACCEPTED_TEXT
from reminders.models import Audience, Reminder
from reminders.schedule import zone
from reminders.services import PartSpec, ReminderSpec, TargetSpec


class ReminderForm(PartAndGroupRows, ReminderChecks, forms.Form):
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
        label="Window opens", coerce=int, choices=hours(0, 23), widget=forms.Select(attrs={"class": "select"})
    )
    window_end_hour = forms.TypedChoiceField(
        label="Window closes", coerce=int, choices=hours(1, 24), widget=forms.Select(attrs={"class": "select"})
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
