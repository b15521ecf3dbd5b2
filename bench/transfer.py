"""Transfer speed: one opaque document ingested through the sandbox server over a slow network, one part at
a time and with several parts in flight, side by side in one run.

The network is Telegram's shape: a round trip per request (`--rtt-ms`, 80) and each connection passing
bytes at its own rate (`--connection-mb`, 5 MB/s). Three ingestions, each of a fresh document in its own
process and database:

- sequential: TRANSFER_PARTS_IN_FLIGHT=1 (one part at a time, one connection: before parallel transfers);
- parallel: `--parts` in flight over `--connections` connections (the defaults, 8 over 4);
- parallel, capped: the same with the account's bandwidth capped at `--cap-mb` (12 MB/s), below what the
  connections could carry, so the cap binds.

Prints download and upload throughput per run (timed around the pipeline's fetch and upload stages), the
parallel ÷ sequential ratio (goal ≥ 4×), the capped runs' share of the cap (goal ≥ 80 %), and for the
parallel run the payload bytes read for hashing per payload byte (goal 1.0) and the pipeline's CPU next to
hashlib.sha256 over the same bytes (goal ≤ 2×; the sandbox server's own CPU is measured apart).

    .venv/bin/python -m bench.transfer [--size-mib 256]
"""

import argparse
import json
import os
import subprocess
import sys
import time

from bench.harness import MB, MIB


def child(args) -> None:
    from bench.harness import MB, MIB, bench_django, ingest_once, one_document_world, stage_timer, world_authorize

    bench_django(f"transfer_{args.child}")
    from bench.ingest_datapath import CountingSha256, sha256_cpu, time_sandbox
    from ingestion import fetching

    size = args.size_mib * MIB
    capped = int(args.cap_mb * MB) if args.child == "capped" else None
    world_authorize(
        one_document_world(
            size=size,
            seed=args.child,
            rtt_ms=args.rtt_ms,
            connection_mb=args.connection_mb,
            bandwidth_bytes_per_s=capped,
        )
    )
    stage_seconds = stage_timer()
    sandbox_cpu = time_sandbox()
    fetching.hashlib = type("hashlib", (), {"sha256": CountingSha256})

    started = {}
    ingest_once(before=lambda: started.update(cpu=time.process_time(), wall=time.monotonic()))
    cpu = time.process_time() - started["cpu"]
    wall = time.monotonic() - started["wall"]
    print(
        json.dumps(
            {
                "download_s": stage_seconds["download"],
                "upload_s": stage_seconds["upload"],
                "wall_s": wall,
                "pipeline_cpu_s": cpu - sandbox_cpu[0],
                "sandbox_cpu_s": sandbox_cpu[0],
                "sha256_cpu_s": sha256_cpu(size),
                "hashed_per_byte": CountingSha256.fed / size,
            }
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size-mib", type=int, default=256)
    parser.add_argument("--rtt-ms", type=int, default=80)
    parser.add_argument("--connection-mb", type=float, default=5)
    parser.add_argument("--cap-mb", type=float, default=12)
    parser.add_argument("--parts", type=int, default=8)
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--child", choices=["sequential", "parallel", "capped"])
    args = parser.parse_args()
    if args.child:
        child(args)
        return

    runs = {"sequential": (1, 1), "parallel": (args.parts, args.connections), "capped": (args.parts, args.connections)}
    results = {}
    for name, (parts, connections) in runs.items():
        env = {
            **os.environ,
            "TRANSFER_PARTS_IN_FLIGHT": str(parts),
            "TRANSFER_CONNECTIONS": str(connections),
            "TRANSFER_ACCOUNT_PARTS_IN_FLIGHT": str(2 * parts),
        }
        command = [sys.executable, "-m", "bench.transfer", "--child", name, *sys.argv[1:]]
        out = subprocess.run(command, env=env, check=True, capture_output=True, text=True).stdout
        results[name] = json.loads(out.strip().splitlines()[-1])

    size = args.size_mib * MIB
    print(
        f"payload: {size:,} bytes ({args.size_mib} MiB); rtt {args.rtt_ms} ms, {args.connection_mb:g} MB/s a "
        f"connection; parallel = {args.parts} parts in flight over {args.connections} connections"
    )
    print("run           parts/conns  download MB/s  upload MB/s  ingest wall s")
    for name, (parts, connections) in runs.items():
        result = results[name]
        print(
            f"{name + (f' ({args.cap_mb:g} MB/s cap)' if name == 'capped' else ''):<26}"
            f"{parts}/{connections:<6} {size / result['download_s'] / MB:>8.2f} {size / result['upload_s'] / MB:>12.2f}"
            f" {result['wall_s']:>12.1f}"
        )
    sequential, parallel, capped = results["sequential"], results["parallel"], results["capped"]
    for stage in ("download", "upload"):
        ratio = sequential[f"{stage}_s"] / parallel[f"{stage}_s"]
        share = size / capped[f"{stage}_s"] / (args.cap_mb * MB)
        print(f"{stage}: parallel ÷ sequential {ratio:.2f}× (goal ≥ 4×); capped {share:.0%} of the cap (goal ≥ 80 %)")
    gib = size / 1024**3
    for name in ("parallel", "sequential"):
        result = results[name]
        print(
            f"{name}: payload read for hashing per payload byte {result['hashed_per_byte']:.3f} (goal 1.0); "
            f"pipeline CPU {result['pipeline_cpu_s'] / gib:.2f} s/GiB, hashlib.sha256 "
            f"{result['sha256_cpu_s'] / gib:.2f} s/GiB, ratio {result['pipeline_cpu_s'] / result['sha256_cpu_s']:.2f} "
            f"(goal ≤ 2.0); sandbox server CPU (left out) {result['sandbox_cpu_s'] / gib:.2f} s/GiB"
        )


if __name__ == "__main__":
    main()
