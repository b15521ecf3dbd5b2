"""A separate OS process that takes file parts' bytes from an account's transfer budget (its bandwidth cap).

    python -m tests.ingestion.transfer_budget_worker GO_FILE ACCOUNT_ID PARTS

Waits for GO_FILE so that every process starts at the same moment, then prints, as JSON, the wall-clock time at
which each part's bytes were given.
"""

import asyncio
import json
import os
import sys
import time


def main(go_file: str, account_id: str, parts: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import django

    django.setup()
    from accounts.models import TelegramAccount
    from ingestion.transfer_budget import TransferBudget
    from telegram.records import PART_SIZE
    from tests.support.start_line import wait_at_start_line

    budget = TransferBudget(account=TelegramAccount.objects.get(pk=int(account_id)))

    async def take() -> list[float]:
        stamps = []
        for _ in range(int(parts)):
            await budget(PART_SIZE)
            stamps.append(time.time())
        return stamps

    wait_at_start_line(go_file)
    print(json.dumps({"stamps": asyncio.run(take())}))


if __name__ == "__main__":
    main(*sys.argv[1:4])
