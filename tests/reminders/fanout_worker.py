"""A separate OS process that sends reminder runs as the Celery task does.

    python -m tests.reminders.fanout_worker GO_FILE RUN_ID [RUN_ID ...]

DATABASE_URL names the test database. Waits for GO_FILE so that every process starts at the
same moment; a run whose account is busy is tried again shortly (the task would retry later).
Prints each run's ending as JSON.
"""

import json
import os
import sys
import time


def main(go_file: str, *run_ids: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import django

    django.setup()
    from reminders import fanout
    from tests.support.start_line import wait_at_start_line

    wait_at_start_line(go_file)
    endings = {}
    for run_id in run_ids:
        while (ending := fanout.reminder_run_execute(run_id=int(run_id))) == fanout.BUSY:
            time.sleep(0.01)
        endings[run_id] = ending
    print(json.dumps(endings))


if __name__ == "__main__":
    main(*sys.argv[1:])
