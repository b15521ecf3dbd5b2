import os
import signal
import threading

from celery import Celery
from celery.signals import setup_logging, task_prerun, worker_ready, worker_shutting_down
from kombu.transport import TRANSPORT_ALIASES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.base")
# redis:// and rediss:// reach kombu's Redis transport with the guard of config/celery_transport.py; by the alias,
# not a transport setting, so Flower and the logs still read the broker's URL as redis://.
TRANSPORT_ALIASES["redis"] = TRANSPORT_ALIASES["rediss"] = "config.celery_transport:Transport"

app = Celery("stashcast")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@setup_logging.connect
def _use_django_logging(**kwargs):
    # Celery logs through Django's LOGGING, so task ids appear in every line.
    from logging.config import dictConfig

    from django.conf import settings

    dictConfig(settings.LOGGING)


def _shutdown_requested(signum, frame):
    from core.engine import engine_shutdown_request

    engine_shutdown_request()


@task_prerun.connect
def _warm_shutdown_in_pool_processes(**kwargs):
    # A pool process told to stop (by the worker below, or a SIGTERM to the whole process group) lets the part on
    # the wire finish, then hands its run back at once: queued again, for another worker to take up. Set before
    # each task: billiard puts its own handler (exit at once) in place after the process starts.
    from billiard.process import current_process

    if current_process().name == "MainProcess":
        return  # the solo or threads pool: the worker's own warm shutdown tells the runs (below)
    if signal.getsignal(signal.SIGTERM) is not _shutdown_requested:
        signal.signal(signal.SIGTERM, _shutdown_requested)


_worker_ready = threading.Event()


@worker_ready.connect
def _worker_is_ready(**kwargs):
    _worker_ready.set()


@worker_shutting_down.connect
def _warm_shutdown_tells_the_runs(sig, how, exitcode, **kwargs):
    if how != "Warm" or not _worker_ready.is_set():
        return  # before it is ready no task runs, and a pool process stopped while the pool starts is a crash
    from billiard.process import active_children

    from core.engine import engine_shutdown_request

    engine_shutdown_request()  # tasks running in this process (the solo and threads pools)
    for child in active_children():
        os.kill(child.pid, signal.SIGTERM)
