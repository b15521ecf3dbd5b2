from django.apps import AppConfig


class RemindersConfig(AppConfig):
    name = "reminders"

    def ready(self):
        from accounts.signals import account_rest_ended, account_rest_started, account_sending_changed
        from core.runs import run_kind_register
        from reminders import services
        from reminders.models import ReminderRun

        # the reaper re-queues a run whose worker went quiet; executing it again resumes it
        run_kind_register(model=ReminderRun, enqueue=services.reminder_run_enqueue)
        # an account's rest or stop switch pauses (and later resumes) every run of it
        account_rest_started.connect(
            lambda account, reason, **kwargs: services.runs_pause_for_rest(account=account, reason=reason),
            weak=False,
            dispatch_uid="reminders.runs_pause_for_rest",
        )
        account_rest_ended.connect(
            lambda account, resume_runs, **kwargs: services.runs_after_rest(account=account, resume_runs=resume_runs),
            weak=False,
            dispatch_uid="reminders.runs_after_rest",
        )
        account_sending_changed.connect(
            lambda account, stopped, **kwargs: services.runs_after_sending_changed(account=account, stopped=stopped),
            weak=False,
            dispatch_uid="reminders.runs_after_sending_changed",
        )
