"""A separate OS process that executes package sends as the Celery task does.

    python -m tests.packages.send_worker GO_FILE SEND_ID [SEND_ID ...]

DATABASE_URL names the test database. Waits for GO_FILE so that every process starts at the same moment;
a send whose account is busy is tried again shortly (the task would retry later). Prints each ending as JSON.
"""

import json
import os
import sys
import time


def main(go_file: str, *send_ids: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import django

    django.setup()
    from packages import sending
    from tests.support.start_line import wait_at_start_line

    wait_at_start_line(go_file)
    endings = {}
    for send_id in send_ids:
        while (ending := sending.package_send_execute(send_id=int(send_id))) == sending.BUSY:
            time.sleep(0.01)
        endings[send_id] = ending
    print(json.dumps(endings))


if __name__ == "__main__":
    main(*sys.argv[1:])
