"""The reminder form's checks: the services' rules (reminder_validate) for a page's sections, each error put under
the field, part row or group list it names."""

from django.core.exceptions import ValidationError

from core.forms import item_errors
from reminders import services
from reminders.forms.steps import ALBUM, CRONTAB, MEDIA, ONCE, SECTION_OF, SECTIONS, TEXT


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


class ReminderChecks:
    """The reminder form's checks (a part of `ReminderForm`)."""

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
