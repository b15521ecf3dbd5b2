"""Faults against `make run` itself: its own supervisord restarts what a fault ends, not the bench.

One stack as `make run` starts it (fresh var/, the demo world, an ingestion cycle a minute); SETS new archive
sets are posted to the demo's STL Vault channel (zips and multi-volume 7z sets) and the demo's flash sale run is
resumed (its pending groups, the pace slowed so the fan-out outlasts the faults); every FAULT_EVERY seconds one
fault, in order: PostgreSQL restarted (SIGQUIT, its immediate shutdown, as `pg_ctl restart -m immediate`), Redis
flushed and down 8 s, a worker SIGKILLed, beat SIGKILLed, web SIGKILLed. After each: how long until the dashboard
served again, and whether `make run` still ran. Then, once the run has ended and every set is in, against a
fault-free run of the same world: wall time, status, groups that got the flash sale exactly once, sets in the
archive channel exactly once (every volume) with their package, and the restarts `make status` counted.

(The S3 server of bench/chaos.py has no place here: `make run` keeps files on its disk.)

    .venv/bin/python -m bench.make_run_faults [--fault-every 8] [--per-minute 10] [--sets 6]
"""

import argparse
import json
import os
import signal
import tempfile
import time
from pathlib import Path

import redis

from config.devstack.supervise import rpc
from tests.support.make_run import RESUME, MakeRun, flash_sale_per_group, flash_sale_progress

SOURCE, ARCHIVE = 2001, 3001  # the demo's STL Vault and its archive channel


def _sets_post(stack: MakeRun, count: int) -> list[str]:
    """`count` new sets in the source channel, as someone outside posts them; their names."""
    names, posts = [], []
    for k in range(count):
        if k % 2:
            name = f"bench-set-{k}.7z"
            spec = {"name": name, "archive": [{"path": f"s{k}/part.stl", "size": 600_000 + k}], "volume_size": 262_144}
        else:
            name = f"bench-set-{k}.zip"
            spec = {"name": name, "archive": [{"path": f"m{k}/model.stl", "size": 200_000 + k}]}
        names.append(name)
        posts.append(f"call_command('sandbox_post', '{SOURCE}', '--archive-json', {json.dumps(json.dumps(spec))})")
    stack.manage("from django.core.management import call_command; " + "; ".join(posts))
    return names


def _sets_in(stack: MakeRun, names: list[str]) -> list[int]:
    """For each set: how many times its every volume is in the archive channel (0 until its package is done)."""
    code = (
        "import json; from collections import Counter; from packages.models import Package\n"
        "from telegram.management.world import sandbox_world_open\n"
        f"with sandbox_world_open() as world: dump = world.chat_dump({ARCHIVE})['messages']\n"
        "posted = Counter(m['document']['name'] for m in dump if m.get('document'))\n"
        "out = []\n"
        f"for name in {names!r}:\n"
        "    package = Package.objects.filter(file_name__startswith=name).exclude(dest_message_ids=[]).first()\n"
        "    out.append(min(posted[part] for part in package.dest_part_names) if package else 0)\n"
        "print(json.dumps(out))"
    )
    return json.loads(stack.manage(code))


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


def one_run(*, faults: bool, every: float, per_minute: int, sets: int) -> dict:
    # A stuck run is re-queued after 30 s; a queued run whose task a flushed Redis lost is sent again after 60 s.
    env = {"REMINDER_MAX_SEND_PER_MINUTE": str(per_minute), "WORK_STALE_AFTER_SECONDS": "30"}
    env |= {"WORK_RESEND_QUEUED_AFTER_SECONDS": "60", "RUNS_REAP_EVERY_SECONDS": "10", "INGEST_INTERVAL_MINUTES": "1"}
    stack = MakeRun(Path(tempfile.mkdtemp(prefix="stashcast-bench-make-run-")), **env)
    try:
        stack.wait_started()
        _, _, total = flash_sale_progress(stack)
        started = time.monotonic()
        names = _sets_post(stack, sets)
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
        stack.wait_for(lambda: all(_sets_in(stack, names)), 900, "every set in the archive channel")
        wall = time.monotonic() - started
        status = flash_sale_progress(stack)[0]
        once = sum(count == 1 for count in flash_sale_per_group(stack))
        sets_once = sum(count == 1 for count in _sets_in(stack, names))
        restarts = stack.status().stdout
        still_running = stack.process.poll() is None
    finally:
        stack.stop()
    return {
        "wall": wall,
        "status": status,
        "once": once,
        "total": total,
        "sets_once": sets_once,
        "sets": sets,
        "served": served,
        "restarts": restarts,
        "running": still_running,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fault-every", type=float, default=8)
    parser.add_argument("--per-minute", type=int, default=10)
    parser.add_argument("--sets", type=int, default=6)
    args = parser.parse_args()
    calm = one_run(faults=False, every=args.fault_every, per_minute=args.per_minute, sets=args.sets)
    chaos = one_run(faults=True, every=args.fault_every, per_minute=args.per_minute, sets=args.sets)
    print(f"{'':<28} {'fault-free':>12} {'faults':>12}")
    print(f"{'wall time (s)':<28} {calm['wall']:>12.0f} {chaos['wall']:>12.0f}  ({chaos['wall'] / calm['wall']:.2f}x)")
    print(f"{'run status':<28} {calm['status']:>12} {chaos['status']:>12}")
    groups = f"{chaos['once']}/{chaos['total']}"
    calm_groups = f"{calm['once']}/{calm['total']}"
    print(f"{'groups sent exactly once':<28} {calm_groups:>12} {groups:>12}")
    sets_line = f"{calm['sets_once']}/{calm['sets']}", f"{chaos['sets_once']}/{chaos['sets']}"
    print(f"{'sets in exactly once':<28} {sets_line[0]:>12} {sets_line[1]:>12}")
    print(f"{'make run still running':<28} {calm['running']!s:>12} {chaos['running']!s:>12}")
    print("\nfault                         dashboard serving again after   make run running")
    for name, seconds, running in chaos["served"]:
        print(f"{name:<29} {seconds:>8.1f} s {'':>22}{running}")
    print(f"\n`make status` at the end of the run with faults:\n{chaos['restarts']}")


if __name__ == "__main__":
    main()
