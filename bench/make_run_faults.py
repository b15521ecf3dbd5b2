"""Faults against `make run` itself: its own supervisord restarts what a fault ends, not the bench.

One stack as `make run` starts it (fresh var/, the demo world); the demo's flash sale run is resumed (its 12
pending groups, the pace slowed so the fan-out outlasts the faults); every FAULT_EVERY seconds one fault, in
order: PostgreSQL restarted (SIGQUIT, its immediate shutdown, as `pg_ctl restart -m immediate`), Redis flushed and
down 8 s, a worker SIGKILLed, beat SIGKILLed, web SIGKILLed. After each: how long until the dashboard served
again, and whether `make run` still ran. Then the run's end, against a fault-free run of the same world: wall
time, status, groups that got the flash sale exactly once, and the restarts `make status` counted.

(The S3 server of bench/chaos.py has no place here: `make run` keeps files on its disk.)

    .venv/bin/python -m bench.make_run_faults [--fault-every 8] [--per-minute 10]
"""

import argparse
import os
import signal
import tempfile
import time
from pathlib import Path

import redis

from config.devstack.supervise import rpc
from tests.support.make_run import RESUME, MakeRun, flash_sale_per_group, flash_sale_progress


def _pid(stack: MakeRun, name: str) -> int:
    return stack.info(name)["pid"]


def _redis_flushed_and_down(stack: MakeRun) -> None:
    redis.Redis(port=stack.stack.redis_port).flushall()
    control = rpc(stack.stack).supervisor
    control.stopProcess("redis")
    time.sleep(8)
    control.startProcess("redis")


FAULTS = [
    ("postgres restarted", lambda stack: os.kill(_pid(stack, "postgres"), signal.SIGQUIT)),
    ("redis flushed, down 8 s", _redis_flushed_and_down),
    ("worker SIGKILLed", lambda stack: os.kill(_pid(stack, "worker"), signal.SIGKILL)),
    ("beat SIGKILLed", lambda stack: os.kill(_pid(stack, "beat"), signal.SIGKILL)),
    ("web SIGKILLed", lambda stack: os.kill(_pid(stack, "web"), signal.SIGKILL)),
]


def one_run(*, faults: bool, every: float, per_minute: int) -> dict:
    # A stuck run is re-queued after 30 s; a queued run whose task a flushed Redis lost is sent again after 60 s.
    env = {"REMINDER_MAX_SEND_PER_MINUTE": str(per_minute), "WORK_STALE_AFTER_SECONDS": "30"}
    env["WORK_RESEND_QUEUED_AFTER_SECONDS"] = "60"
    stack = MakeRun(Path(tempfile.mkdtemp(prefix="stashcast-bench-make-run-")), RUNS_REAP_EVERY_SECONDS="10", **env)
    try:
        stack.wait_started()
        _, _, total = flash_sale_progress(stack)
        started = time.monotonic()
        stack.manage(RESUME)
        served = []
        for name, fault in FAULTS if faults else []:
            time.sleep(every)
            at = time.monotonic()
            fault(stack)
            time.sleep(1)
            stack.wait_for(stack.serving, 180, f"the dashboard serving after {name}")
            served.append((name, time.monotonic() - at, stack.process.poll() is None))
        stack.wait_for(lambda: flash_sale_progress(stack)[0] in ("success", "partial", "failed"), 900, "the run's end")
        wall = time.monotonic() - started
        status = flash_sale_progress(stack)[0]
        once = sum(count == 1 for count in flash_sale_per_group(stack))
        restarts = stack.status().stdout
        still_running = stack.process.poll() is None
    finally:
        stack.stop()
    return {
        "wall": wall,
        "status": status,
        "once": once,
        "total": total,
        "served": served,
        "restarts": restarts,
        "running": still_running,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fault-every", type=float, default=8)
    parser.add_argument("--per-minute", type=int, default=10)
    args = parser.parse_args()
    calm = one_run(faults=False, every=args.fault_every, per_minute=args.per_minute)
    chaos = one_run(faults=True, every=args.fault_every, per_minute=args.per_minute)
    print(f"{'':<28} {'fault-free':>12} {'faults':>12}")
    print(f"{'wall time (s)':<28} {calm['wall']:>12.0f} {chaos['wall']:>12.0f}  ({chaos['wall'] / calm['wall']:.2f}x)")
    print(f"{'run status':<28} {calm['status']:>12} {chaos['status']:>12}")
    groups = f"{chaos['once']}/{chaos['total']}"
    calm_groups = f"{calm['once']}/{calm['total']}"
    print(f"{'groups sent exactly once':<28} {calm_groups:>12} {groups:>12}")
    print(f"{'make run still running':<28} {calm['running']!s:>12} {chaos['running']!s:>12}")
    print("\nfault                         dashboard serving again after   make run running")
    for name, seconds, running in chaos["served"]:
        print(f"{name:<29} {seconds:>8.1f} s {'':>22}{running}")
    print(f"\n`make status` at the end of the run with faults:\n{chaos['restarts']}")


if __name__ == "__main__":
    main()
