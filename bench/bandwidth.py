"""An account's bandwidth cap: one opaque document ingested through the sandbox server with 8 parts in flight,
the account capped at C bytes/s (below what its connections could carry, so the cap binds).

Prints C, the measured download and upload throughput (the file's size over the pipeline's fetch and upload
stages) and their ratio to C (goal: within 5 %).

    .venv/bin/python -m bench.bandwidth [--size-mib 64] [--cap-mb 4] [--parts 8]
"""

import argparse
import os
import time

MB = 1_000_000
MIB = 1024 * 1024


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=int, default=64)
    parser.add_argument("--cap-mb", type=float, default=4)
    parser.add_argument("--parts", type=int, default=8)
    parser.add_argument("--rtt-ms", type=int, default=80)
    parser.add_argument("--connection-mb", type=float, default=5)
    args = parser.parse_args()
    os.environ["TRANSFER_PARTS_IN_FLIGHT"] = str(args.parts)
    os.environ["TRANSFER_CONNECTIONS"] = "4"
    os.environ["TRANSFER_ACCOUNT_PARTS_IN_FLIGHT"] = str(2 * args.parts)

    from bench.harness import bench_django

    bench_django("bandwidth")
    from django.conf import settings

    from accounts.models import TelegramAccount
    from core.ratelimit import KEY_PREFIX
    from core.runs import run_claim
    from ingestion import fetching, pipeline, uploading
    from ingestion.models import IngestionRun
    from operations.sandbox import sandbox_authorize
    from telegram.sandbox.loader import world_load

    size, cap = args.size_mib * MIB, int(args.cap_mb * MB)
    phone = "+15550000001"
    world_load(
        settings.SANDBOX_PATH,
        {
            "network": {"rtt_ms": args.rtt_ms, "connection_bytes_per_s": int(args.connection_mb * MB)},
            "accounts": [{"phone": phone, "first_name": "Reader"}],
            "chats": [
                {
                    "id": 1001,
                    "title": "Source",
                    "type": "channel",
                    "role": "source",
                    "members": [phone],
                    "messages": [{"id": 1, "document": {"name": "payload.zip", "size": size, "seed": 11}}],
                },
                {"id": 9000, "title": "Archive", "type": "channel", "role": "destination", "admins": [phone]},
            ],
        },
    )
    sandbox_authorize()
    account = TelegramAccount.objects.get()
    TelegramAccount.objects.filter(pk=account.pk).update(ingest_bytes_per_second=cap, ingest_spent_until=None)
    import redis

    redis.Redis.from_url(settings.REDIS_URL).delete(f"{KEY_PREFIX}transfer:account:{account.pk}")

    seconds = {"download": 0.0, "upload": 0.0}

    def timed(owner, name, stage):
        original = getattr(owner, name)

        async def wrapper(*a, **kw):
            started = time.monotonic()
            try:
                return await original(*a, **kw)
            finally:
                seconds[stage] += time.monotonic() - started

        setattr(owner, name, wrapper)

    timed(fetching.FetchStage, "download", "download")
    timed(uploading.UploadStage, "upload", "upload")
    run = IngestionRun.objects.create(account=account, trigger="command")
    pipeline.ingestion_run_execute(run=run_claim(model=IngestionRun, run_id=run.pk))
    run.refresh_from_db()
    assert run.ingested == 1, run.error

    print(
        f"payload {size:,} bytes ({args.size_mib} MiB); {args.parts} parts in flight over 4 connections of "
        f"{args.connection_mb:g} MB/s, rtt {args.rtt_ms} ms"
    )
    print(f"cap C = {cap:,} bytes/s")
    for stage in ("download", "upload"):
        measured = size / seconds[stage]
        print(f"{stage}: measured {measured:,.0f} bytes/s, ratio {measured / cap:.3f} (goal 0.95–1.05)")


if __name__ == "__main__":
    main()
