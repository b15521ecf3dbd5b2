"""Chaos: ingestion and fan-outs through real Celery workers while the ground under them moves.

One seeded world: SETS archive sets (some multi-volume, some slow enough to outlast the stale threshold) in
three source channels read by three accounts, uploaded by one writer; three reminders of GROUPS groups × 2
parts, one per sender account. Two Celery workers (prefork) do the work; this process plays beat (the reaper
and the re-send of forgotten tasks every few seconds). Every FAULT_EVERY seconds (jittered) one fault, at
random: PostgreSQL restarted (`pg_ctl restart -m immediate`), Redis flushed and restarted, a worker SIGKILLed
(and a new one started), a worker SIGTERMed (and a new one started). The object store is the local disk here
(its outage has its own test); beat is this process, so "beat killed" is not drawn.

Prints, for the chaotic run against a fault-free run of the same world: wall time, sets in the destination (each
once, each with its package), groups that got each part exactly once, the most sends of an account in any
(time-scaled) minute against the budget + burst, duplicated sessions, runs failed and skipped packages.

    .venv/bin/python -m bench.chaos [--sets 30] [--groups 300] [--fault-every 20] [--seed 7] [--timeout 900]
"""

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit

from bench.harness import bench_django

READERS = ("+15550000301", "+15550000302", "+15550000303")
WRITER = "+15550000309"
SENDERS = ("+15550000311", "+15550000312", "+15550000313")
SOURCE_BASE, DESTINATION, GROUP_BASE = 3100, 9300, 930_000
PER_MINUTE, BURST, SCALE = 40, 3, 10  # the pace's proportions, made SCALE times faster
STALE, HEARTBEAT = 30, 5


def world(*, sets: int, groups: int, seed: int) -> dict:
    rng = random.Random(seed)
    chats = []
    for n, reader in enumerate(READERS):
        messages, message_id = [], 10
        for k in range(n, sets, len(READERS)):
            kind = rng.choice(["zip", "7z-volumes", "slow"])
            if kind == "zip":
                document = {"name": f"model-{k}.zip", "archive": [{"path": f"m{k}/a.stl", "size": 200_000 + k}]}
            elif kind == "7z-volumes":
                document = {
                    "name": f"set-{k}.7z",
                    "archive": [{"path": f"s{k}/a.stl", "size": 600_000 + k}],
                    "volume_size": 262_144,
                }
            else:  # slow: ~2 MB at the reader's bandwidth, longer than a heartbeat period
                document = {"name": f"big-{k}.bin.zip", "size": 2_000_000 + k, "seed": k}
            messages.append({"id": message_id, "document": document})
            message_id += 4
        chats.append(
            {"id": SOURCE_BASE + n, "title": f"Source {n}", "type": "channel", "role": "source", "members": [reader]}
            | {"messages": messages}
        )
    chats.append(
        {"id": DESTINATION, "title": "Archive", "type": "channel", "role": "destination"}
        | {"members": [WRITER], "admins": [WRITER], "messages": []}
    )
    for g in range(groups):
        chats.append({"id": GROUP_BASE + g, "title": f"Group {g:04d}", "type": "supergroup", "members": list(SENDERS)})
    accounts = [
        {"phone": reader, "first_name": f"Reader {n}", "code": "12345", "bandwidth_bytes_per_s": 400_000}
        for n, reader in enumerate(READERS)
    ]
    accounts += [{"phone": WRITER, "first_name": "Writer", "code": "12345"}]
    accounts += [{"phone": phone, "first_name": f"Sender {n}", "code": "12345"} for n, phone in enumerate(SENDERS)]
    return {"accounts": accounts, "chats": chats}


class Workers:
    def __init__(self, work: Path, env: dict):
        self.work, self.env, self.procs, self.started = work, env, [], 0

    def start(self) -> None:
        self.started += 1
        log = open(self.work / f"worker-{self.started}.log", "w")  # noqa: SIM115 - kept open for the process
        self.procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "config.celery_app", "worker", "-Q", "ingest,fanout,default"]
                + ["--concurrency", "2", "--hostname", f"chaos{self.started}@%h", "--without-mingle"]
                + ["--without-gossip", "-l", "warning"],
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )
        )

    def alive(self) -> list[subprocess.Popen]:
        return [proc for proc in self.procs if proc.poll() is None]

    def keep(self, count: int) -> None:
        """As a supervisor (compose's restart policy) would: a worker that exited is started again."""
        for _ in range(count - len(self.alive())):
            self.start()

    def replace_one(self, sig: int) -> None:
        victim = random.choice(self.alive())
        os.killpg(victim.pid, signal.SIGKILL) if sig == signal.SIGKILL else os.kill(victim.pid, sig)
        self.start()

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def restart_postgres() -> None:
    from config.devstack import PG_OS_USER, Stack, _pg_bin

    data = Stack.from_env().var / "postgres"
    subprocess.run(
        [str(_pg_bin() / "pg_ctl"), "-D", str(data), "-l", str(data.parent / "postgres.log")]
        + ["-m", "immediate", "-w", "-t", "60", "restart"],
        user=PG_OS_USER if os.geteuid() == 0 else None,
        check=True,
        capture_output=True,
    )


def flush_and_restart_redis() -> None:
    import redis
    from django.conf import settings

    from config.devstack import EmbeddedRedis, Stack

    redis.Redis.from_url(settings.REDIS_URL).flushall()
    port = urlsplit(settings.REDIS_URL).port  # the one every process was given, whatever STASHCAST_REDIS_PORT says
    server = EmbeddedRedis(Stack.from_env().var / "redis", port)
    server.stop()
    server.start()


def play_beat() -> None:
    """What beat does, often: reap silent runs, send again the tasks a flushed Redis forgot."""
    from django.db import connection

    from core.runs import run_kinds, runs_reap_stale, runs_resend_forgotten

    try:
        runs_reap_stale()
        for kind in run_kinds():
            runs_resend_forgotten(model=kind.model, older_than=timedelta(seconds=20), enqueue=kind.enqueue)
    except Exception as exc:  # the database or Redis is away right now: next time
        print(f"  beat: {exc.__class__.__name__}", flush=True)
        connection.close()


def start_work(groups: int) -> list:
    from accounts.models import Chat, TelegramAccount
    from ingestion.services import ingestion_run_request
    from reminders.services import PartSpec, ReminderSpec, TargetSpec, reminder_create, reminder_fire

    runs = []
    for reader in READERS:
        run, _ = ingestion_run_request(account=TelegramAccount.objects.get(phone=reader))
        runs.append(run)
    for n, phone in enumerate(SENDERS):
        sender = TelegramAccount.objects.get(phone=phone)
        chats = Chat.objects.filter(account_links__account=sender, telegram_id__gte=GROUP_BASE).order_by("telegram_id")
        spec = ReminderSpec(
            account=sender,
            name=f"Chaos {n}",
            timezone="UTC",
            window_start_hour=0,
            window_end_hour=24,
            parts=[PartSpec(text=f"Hello {n}"), PartSpec(text=f"Again {n}")],
            targets=[TargetSpec(chat=chat) for chat in chats[:groups]],
        )
        runs.append(reminder_fire(reminder=reminder_create(spec=spec)))
    return runs


def all_over(runs) -> bool:
    from django.db import connection

    try:
        return all(type(run).objects.get(pk=run.pk).status in ("success", "partial", "failed") for run in runs)
    except Exception:
        connection.close()
        return False


def counts(loaded, *, sets: int, groups: int) -> dict:
    from ingestion.models import IngestionRun, SkippedPackage
    from packages.models import Package
    from reminders.models import ReminderRun

    documents = [m for m in loaded.chat_dump(DESTINATION)["messages"] if m["document"]]
    names = Counter(m["document"]["name"] for m in documents)
    packaged = {i for package in Package.objects.all() for i in package.dest_message_ids}
    exact, worst_minute = 0, 0
    sends = {phone: [] for phone in SENDERS}
    for g in range(groups):
        posts = loaded.chat_dump(GROUP_BASE + g)["messages"]
        for n, phone in enumerate(SENDERS):
            mine = [m for m in posts if m["sender"] == phone]
            exact += [m["text"] for m in mine] == [f"Hello {n}", f"Again {n}"]
            sends[phone].extend(datetime.fromisoformat(m["date"]).timestamp() for m in mine)
    window = 60 / SCALE
    for times in sends.values():
        times.sort()
        start = 0
        for end, moment in enumerate(times):
            while moment - times[start] >= window:
                start += 1
            worst_minute = max(worst_minute, end - start + 1)
    sessions = loaded.stats()["sessions"]
    return {
        "sets_in_destination": Package.objects.count(),
        "sets_expected": sets,
        "uploads_posted_twice": sum(count - 1 for count in names.values() if count > 1),
        "uploads_without_package": sum(1 for m in documents if m["id"] not in packaged),
        "groups_each_part_once": exact,
        "groups_expected": groups * len(SENDERS),
        "most_sends_in_a_minute": worst_minute,
        "budget_plus_burst": PER_MINUTE + BURST,
        "duplicated_sessions": sum(s["duplicated"] for s in sessions.values()),
        "duplicated_by_account": {phone: s["duplicated"] for phone, s in sessions.items() if s["duplicated"]},
        "runs_failed": IngestionRun.objects.filter(status="failed").count()
        + ReminderRun.objects.filter(status="failed").count(),
        "skipped_packages": SkippedPackage.objects.exclude(reason="waiting_for_volumes").count(),
    }


def one_run(label: str, *, sets: int, groups: int, seed: int, fault_every: float, timeout: float) -> dict:
    from django.core.management import call_command

    from telegram.sandbox.world import World

    work = bench_django(f"chaos_{label}")
    path = work / "world.json"
    path.write_text(json.dumps(world(sets=sets, groups=groups, seed=seed)))
    call_command("sandbox_load", str(path), "--authorize", verbosity=0)
    loaded = World(os.environ["SANDBOX_PATH"])
    env = {
        **os.environ,
        "WORK_STALE_AFTER_SECONDS": str(STALE),
        "WORK_HEARTBEAT_SECONDS": str(HEARTBEAT),
        "REMINDER_MAX_SEND_PER_MINUTE": str(PER_MINUTE * SCALE),
        "REMINDER_SEND_BURST": str(BURST),
        "REMINDER_PART_JITTER_MIN_MS": "20",
        "REMINDER_PART_JITTER_MAX_MS": "50",
        "INGEST_SET_SETTLE_SECONDS": "0",
    }
    from config.celery_app import app

    with app.connection_for_write() as conn:
        for queue in ("ingest", "default", "fanout"):
            conn.default_channel.client.delete(queue)
    logs = Path(tempfile.gettempdir()) / f"stashcast-chaos-workers-{label}"  # kept: why a worker stopped
    logs.mkdir(exist_ok=True)
    workers = Workers(logs, env)
    for _ in range(2):
        workers.start()
    rng = random.Random(seed)
    faults = Counter()
    started = time.monotonic()
    runs = start_work(groups)
    next_fault = started + fault_every * rng.uniform(0.5, 1.5)
    try:
        while not all_over(runs) and time.monotonic() - started < timeout:
            time.sleep(2)
            workers.keep(2)
            play_beat()
            if fault_every and time.monotonic() >= next_fault:
                fault = rng.choice(["postgres", "redis", "sigkill", "sigterm"])
                print(f"  {time.monotonic() - started:6.1f} s: {fault}", flush=True)
                {
                    "postgres": restart_postgres,
                    "redis": flush_and_restart_redis,
                    "sigkill": lambda: workers.replace_one(signal.SIGKILL),
                    "sigterm": lambda: workers.replace_one(signal.SIGTERM),
                }[fault]()
                faults[fault] += 1
                next_fault = time.monotonic() + fault_every * rng.uniform(0.5, 1.5)
    finally:
        wall = time.monotonic() - started
        workers.stop()
    from django.db import connection

    connection.close()
    return {"wall_seconds": round(wall), "faults": dict(faults), **counts(loaded, sets=sets, groups=groups)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", type=int, default=30)
    parser.add_argument("--groups", type=int, default=300)
    parser.add_argument("--fault-every", type=float, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--only", choices=["calm", "chaos"])
    args = parser.parse_args()
    results = {}
    for label, every in (("calm", 0), ("chaos", args.fault_every)):
        if args.only in (None, label):
            # Each run in its own process: Django is set up once per process, on that run's database.
            if args.only is None:
                out = subprocess.run(
                    [sys.executable, "-m", "bench.chaos", "--only", label]
                    + ["--sets", str(args.sets), "--groups", str(args.groups), "--fault-every", str(args.fault_every)]
                    + ["--seed", str(args.seed), "--timeout", str(args.timeout)],
                    stdout=subprocess.PIPE,
                    text=True,
                )
                print(out.stdout, end="", flush=True)
                results[label] = json.loads(out.stdout.strip().splitlines()[-1])
                continue
            kwargs = {"sets": args.sets, "groups": args.groups, "seed": args.seed, "timeout": args.timeout}
            print(json.dumps(one_run(label, fault_every=every, **kwargs)), flush=True)
            return
    print(f"\n{'':28}{'calm':>10}{'chaos':>10}")
    for key in results["calm"]:
        if key != "faults":
            print(f"{key:28}{results['calm'][key]!s:>10}{results['chaos'][key]!s:>10}")
    print(f"faults injected: {results['chaos']['faults']}")


if __name__ == "__main__":
    main()
