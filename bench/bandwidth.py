"""An account's bandwidth cap: one opaque document ingested through the sandbox server with 8 parts in flight,
the account capped at C bytes/s (below what its connections could carry, so the cap binds).

Prints C, the measured download and upload throughput (the file's size over the pipeline's fetch and upload
stages) and their ratio to C (goal: within 5 %).

    .venv/bin/python -m bench.bandwidth [--size-mib 64] [--cap-mb 4] [--parts 8]
"""

import argparse
import os


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

    from bench.harness import MB, MIB, bench_django, ingest_once, one_document_world, stage_timer, world_authorize

    bench_django("bandwidth")
    from django.conf import settings

    from accounts.models import TelegramAccount
    from core.ratelimit import KEY_PREFIX

    size, cap = args.size_mib * MIB, int(args.cap_mb * MB)
    world_authorize(one_document_world(size=size, seed=11, rtt_ms=args.rtt_ms, connection_mb=args.connection_mb))
    account = TelegramAccount.objects.get()
    TelegramAccount.objects.filter(pk=account.pk).update(ingest_bytes_per_second=cap, ingest_spent_until=None)
    import redis

    redis.Redis.from_url(settings.REDIS_URL).delete(f"{KEY_PREFIX}transfer:account:{account.pk}")

    seconds = stage_timer()
    ingest_once()

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
