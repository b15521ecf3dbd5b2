from django.apps import AppConfig


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Core"

    def ready(self):
        from celery.signals import before_task_publish, task_postrun, task_prerun

        from core.api import api_error_status_register
        from core.audit import audit_signals_connect
        from core.crypto import SealBroken

        api_error_status_register(SealBroken, 409)  # the session key changed: log the account in again

        audit_signals_connect()
        task_prerun.connect(_task_started, weak=False, dispatch_uid="audit_task_started")
        task_postrun.connect(_task_finished, weak=False, dispatch_uid="audit_task_finished")
        before_task_publish.connect(_task_sent, weak=False, dispatch_uid="audit_task_sent")


def _task_started(sender=None, task_id=None, task=None, **kwargs):
    from core.audit import audit_task_started

    audit_task_started(task_id=task_id, task_name=task.name)


def _task_finished(sender=None, task_id=None, **kwargs):
    from core.audit import audit_task_finished

    audit_task_finished(task_id=task_id)


def _task_sent(sender=None, **kwargs):
    from core.audit import audit_task_sent

    audit_task_sent(task_name=sender)
