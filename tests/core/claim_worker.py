"""A separate OS process that claims probe runs until none is left.

    python -m tests.core.claim_worker DB_NAME GO_FILE

Waits for GO_FILE so that every process starts claiming at the same moment,
then prints the claimed ids as JSON.
"""

import json
import os
import sys
import time


def main(db_name: str, go_file: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import django

    django.setup()
    from django.db import connection

    from core.runs import run_claim_next
    from core.workers import worker_id
    from tests.claimtest.models import ProbeRun

    connection.settings_dict["NAME"] = db_name
    while not os.path.exists(go_file):
        time.sleep(0.01)
    claimed = []
    while (run := run_claim_next(model=ProbeRun)) is not None:
        claimed.append(run.pk)
    print(json.dumps({"worker_id": worker_id(), "claimed": claimed}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
