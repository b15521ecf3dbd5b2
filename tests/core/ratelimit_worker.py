"""A separate OS process that takes tokens from a shared bucket.

    python -m tests.core.ratelimit_worker NAME COUNT PER_MINUTE CAPACITY GO_FILE

Waits for GO_FILE so that every process starts at the same moment, then prints the
wall-clock time at which each token was due, as JSON.
"""

import asyncio
import json
import os
import sys
import time


def main(name: str, count: str, per_minute: str, capacity: str, go_file: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.test")
    import django

    django.setup()
    from core.ratelimit import TokenBucket
    from tests.support.start_line import wait_at_start_line

    bucket = TokenBucket(name, per_minute=float(per_minute), capacity=int(capacity))

    async def take() -> list[float]:
        stamps = []
        for _ in range(int(count)):
            await bucket.acquire()
            stamps.append(time.time())
        return stamps

    wait_at_start_line(go_file)
    print(json.dumps(asyncio.run(take())))


if __name__ == "__main__":
    main(*sys.argv[1:6])
