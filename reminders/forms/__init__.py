"""The reminder form, shared by the compose wizard (Message → Groups → When → Review) and the edit pages
(one section each). One module per job: the steps, sections and choices (`steps`), the part and group rows read
from the POST by hand (`rows`), the services' rules put where the operator sees them (`checks`), and the form
itself (`reminder`). The views import these names from here."""

from reminders.forms.reminder import ReminderForm
from reminders.forms.steps import SECTIONS, STEP_KEYS, STEPS

__all__ = ["SECTIONS", "STEP_KEYS", "STEPS", "ReminderForm"]
