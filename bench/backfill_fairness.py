"""A big backfill beside a channel with one new set: in which cycle does the new set land?

Channel A holds a backlog of `--backlog` sets (50); channel B, read by the same account, gets one new set: first
beside the whole backlog, then once more while the backfill is under way (posted after the first cycle). Each
channel takes at most its share of a cycle (INGEST_CHANNEL_SETS_PER_CYCLE, 20 by default), and the backfill goes on
in the cycle it queues; the cycles are worked here, one after the other, as a worker would. Prints the cycle each
of B's sets landed in (goal: the cycle it was there for), and the cycles the backfill took.

    .venv/bin/python -m bench.backfill_fairness [--backlog 50]
"""

import argparse
import io
import json


def sets(count: int, *, first_id: int, prefix: str) -> list[dict]:
    return [
        {
            "id": first_id + n,
            "document": {"name": f"{prefix}-{n}.zip", "archive": [{"path": f"{prefix}/{n}.stl", "size": 2000}]},
        }
        for n in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--backlog", type=int, default=50)
    args = parser.parse_args()

    from bench.harness import bench_django

    bench_django("backfill_fairness")
    from django.conf import settings
    from django.core.management import call_command

    from accounts.models import TelegramAccount
    from core.models import RunStatus
    from ingestion.models import IngestionRun
    from ingestion.pipeline import ingestion_run_execute
    from operations.sandbox import sandbox_authorize
    from packages.models import Package
    from telegram.sandbox.loader import world_load
    from telegram.sandbox.world import World

    reader, writer = "+15550000001", "+15550000009"
    world_load(
        settings.SANDBOX_PATH,
        {
            "accounts": [{"phone": reader, "first_name": "Reader"}, {"phone": writer, "first_name": "Writer"}],
            "chats": [
                {
                    "id": 1001,
                    "title": "A (backfill)",
                    "type": "channel",
                    "role": "source",
                    "members": [reader],
                    "messages": sets(args.backlog, first_id=10, prefix="old"),
                },
                {
                    "id": 1002,
                    "title": "B",
                    "type": "channel",
                    "role": "source",
                    "members": [reader],
                    "messages": sets(1, first_id=10, prefix="new"),
                },
                {"id": 9000, "title": "Archive", "type": "channel", "role": "destination", "admins": [writer]},
            ],
        },
    )
    sandbox_authorize()
    account = TelegramAccount.objects.get(phone=reader)

    landed: dict[str, int] = {}
    cycle = 0
    run = IngestionRun.objects.create(account=account, trigger="command")
    while run is not None:
        cycle += 1
        ingestion_run_execute(run_id=run.pk)
        for name in Package.objects.filter(file_name__startswith="new-").values_list("file_name", flat=True):
            landed.setdefault(name, cycle)
        if cycle == 1:  # one more new set in B while the backfill goes on
            document = json.dumps(sets(2, first_id=10, prefix="new")[1]["document"])
            call_command("sandbox_post", "1002", "--archive-json", document, stdout=io.StringIO())
        # the cycle queued for the rest of the backfill (its Celery task is not waited for here)
        run = IngestionRun.objects.filter(account=account, status=RunStatus.QUEUED).first()
        if run is None and "new-1.zip" not in landed:
            run = IngestionRun.objects.create(account=account, trigger="command")

    backlog_done = Package.objects.filter(file_name__startswith="old-").count()
    order = list(Package.objects.order_by("pk").values_list("file_name", flat=True))
    before = {name: sum(1 for earlier in order[: order.index(name)] if earlier.startswith("old-")) for name in landed}
    print(f"backlog {args.backlog} sets in A, share {settings.INGEST_CHANNEL_SETS_PER_CYCLE} sets a cycle")
    print(
        f"B's set there from the start landed in cycle {landed.get('new-0.zip')} (goal 1), after "
        f"{before.get('new-0.zip')} of A's sets"
    )
    print(
        f"B's set posted after cycle 1 landed in cycle {landed.get('new-1.zip')} (goal 2), after "
        f"{before.get('new-1.zip')} of A's sets"
    )
    calls = World(settings.SANDBOX_PATH).stats()["calls"][reader]
    searches = sum(count for method, count in calls.items() if method == "messages.search")
    print(f"the backfill: {backlog_done} of {args.backlog} sets in {cycle} cycles; history pages read {searches}")


if __name__ == "__main__":
    main()
