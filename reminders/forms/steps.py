"""The compose wizard's steps (Message → Groups → When → Review), the edit pages' sections and the field each
belongs to, and the choices the reminder form's fields offer."""

from functools import cache
from zoneinfo import available_timezones

from django import forms

from accounts.models import TelegramAccount
from reminders.schedule import zone

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


def account_label(account: TelegramAccount) -> str:
    label = f"{account.display_name} ({account.phone})" if account.display_name else account.phone
    return label if account.is_authenticated_account else f"{label} — {account.get_auth_state_display().lower()}"


class AccountChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: TelegramAccount) -> str:
        return account_label(obj)


def hours(first: int, last: int) -> list[tuple[int, str]]:
    return [(hour, "24:00 (midnight)" if hour == 24 else f"{hour:02d}:00") for hour in range(first, last + 1)]
