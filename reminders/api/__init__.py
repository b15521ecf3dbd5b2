"""The reminders API, one module per resource: reminders (with Send now, Send me a test and the ETA pill), runs,
media and audiences. The URLs import these names from here."""

from reminders.api.audiences import AudienceViewSet
from reminders.api.media import MediaFileViewSet
from reminders.api.reminders import ReminderViewSet
from reminders.api.runs import ReminderRunViewSet

__all__ = ["AudienceViewSet", "MediaFileViewSet", "ReminderRunViewSet", "ReminderViewSet"]
