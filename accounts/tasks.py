from celery import shared_task

from accounts import pace


@shared_task
def account_rests_end() -> list[int]:
    """Rests that ran out end; apps above resume what the rest paused (accounts.signals.account_rest_ended)."""
    return pace.account_rests_end()
