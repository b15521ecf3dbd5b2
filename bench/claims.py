"""Claim throughput: 4 OS processes claiming from 10,000 queued ingestion runs.

Prints claims per second (goal ≥ 500) and duplicates (goal 0).

    .venv/bin/python -m bench.claims [--processes 4] [--runs 10000]
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from bench.harness import bench_django


def worker(go_file: str, out_file: str) -> None:
    import django

    django.setup()
    from core.runs import run_claim_next
    from ingestion.models import IngestionRun

    while not os.path.exists(go_file):
        time.sleep(0.001)
    claimed = []
    while (run := run_claim_next(model=IngestionRun)) is not None:
        claimed.append(run.pk)
    Path(out_file).write_text(json.dumps(claimed))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--worker", nargs=2)
    args = parser.parse_args()
    if args.worker:
        return worker(*args.worker)

    work = bench_django("claims")
    from accounts.models import TelegramAccount
    from ingestion.models import IngestionRun

    account = TelegramAccount.objects.create(phone="+15550000001")
    IngestionRun.objects.bulk_create((IngestionRun(account=account) for _ in range(args.runs)), batch_size=2000)
    go = work / "go"
    outs = [work / f"claimed-{n}.json" for n in range(args.processes)]
    procs = [
        subprocess.Popen([sys.executable, "-m", "bench.claims", "--worker", str(go), str(out)], env=os.environ.copy())
        for out in outs
    ]
    time.sleep(3)  # every process connected and waiting
    started = time.monotonic()
    go.touch()
    for proc in procs:
        proc.wait()
    elapsed = time.monotonic() - started
    claimed = [run_id for out in outs for run_id in json.loads(out.read_text())]
    duplicates = len(claimed) - len(set(claimed))
    print(f"{args.processes} processes, {args.runs:,} queued runs: {len(set(claimed)):,} claimed in {elapsed:.2f} s")
    print(f"claims per second: {len(claimed) / elapsed:,.0f}  (goal ≥ 500)")
    print(f"duplicates: {duplicates}  (goal 0)   per process: {[len(json.loads(o.read_text())) for o in outs]}")


if __name__ == "__main__":
    main()
