from django.apps import AppConfig


class RemindersConfig(AppConfig):
    name = "reminders"

    def ready(self):
        from core.runs import run_kind_register
        from reminders.models import ReminderRun
        from reminders.services import reminder_run_enqueue

        # the reaper re-queues a run whose worker went quiet; executing it again resumes it
        run_kind_register(model=ReminderRun, enqueue=reminder_run_enqueue)
