"""Chaos: ingestion and fan-outs through real Celery workers while the ground under them moves.

One seeded world: SETS archive sets (some multi-volume, some slow enough to outlast the stale threshold) in
three source channels read by three accounts, uploaded by one writer; three reminders of GROUPS groups × 2
parts, one per sender account. Two Celery workers (prefork) do the work; a real beat (django-celery-beat's
DatabaseScheduler, as `make run` starts it) reaps silent runs, sends forgotten tasks again and starts a cycle a
minute, its schedule shortened through the environment (RUNS_REAP_EVERY_SECONDS, INGEST_INTERVAL_MINUTES). Raw
files go to an S3 server of the run's own (config/s3server.py). Every FAULT_EVERY seconds (jittered) one fault,
each kind once in every round of six, in a seeded random order: PostgreSQL restarted (`pg_ctl restart -m
immediate`), Redis flushed and restarted, the S3 server stopped for a minute (then started again on the same
port with the same buckets), a worker SIGKILLed (and a new one started), a worker SIGTERMed (and a new one
started), beat SIGKILLed (and started again STALE seconds later). Other faults land while the S3 server or beat
is down; the run is over once the fan-outs have ended and the last ingestion run of each reader to end left
nothing undecided.

Prints, for the chaotic run against a fault-free run of the same world: wall time, sets in the destination (each
once, each with its package), groups that got each part exactly once, the most sends of an account in any
(time-scaled) minute against the budget + burst, duplicated sessions, runs failed, skipped packages, ingestion
runs an outage interrupted, raw files kept and those missing from the object store; the faults by kind.

    .venv/bin/python -m bench.chaos [--sets 30] [--groups 300] [--fault-every 20] [--seed 7] [--timeout 900]
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

from bench.harness import bench_django

READERS = ("+15550000301", "+15550000302", "+15550000303")
WRITER = "+15550000309"
SENDERS = ("+15550000311", "+15550000312", "+15550000313")
SOURCE_BASE, DESTINATION, GROUP_BASE = 3100, 9300, 930_000
PER_MINUTE, BURST, SCALE = 40, 3, 10  # the pace's proportions, made SCALE times faster
STALE, HEARTBEAT = 30, 5
# How long the S3 server stays stopped, and beat killed, before they are started again.
OUTAGE_SECONDS = {"s3": 60, "beat": STALE}


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


class Supervised:
    """`count` processes of one command, each started again when it exits, as compose's `restart: unless-stopped`
    does; `command(n)` is the n-th one's command line."""

    def __init__(self, command, *, name: str, count: int, logs: Path, env: dict):
        self.command, self.name, self.count, self.logs, self.env = command, name, count, logs, env
        self.procs, self.started = [], 0

    def start(self) -> None:
        self.started += 1
        log = open(self.logs / f"{self.name}-{self.started}.log", "w")  # noqa: SIM115 - kept open for the process
        self.procs.append(
            subprocess.Popen(
                self.command(self.started),
                env=self.env,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )
        )

    def alive(self) -> list[subprocess.Popen]:
        return [proc for proc in self.procs if proc.poll() is None]

    def keep(self) -> None:
        for _ in range(self.count - len(self.alive())):
            self.start()

    def signal_one(self, sig: int) -> None:
        victim = random.choice(self.alive())
        os.killpg(victim.pid, signal.SIGKILL) if sig == signal.SIGKILL else os.kill(victim.pid, sig)
        if sig == signal.SIGKILL:
            victim.wait()

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)


def worker_command(n: int) -> list[str]:
    return [sys.executable, "-m", "celery", "-A", "config.celery_app", "worker", "-Q", "ingest,fanout,default"] + [
        *("--concurrency", "2", "--hostname", f"chaos{n}@%h", "--without-mingle", "--without-gossip", "-l", "warning")
    ]


def beat_command(n: int) -> list[str]:
    """Beat as `make run` starts it (the Procfile): the schedule in the database, django-celery-beat's."""
    return [sys.executable, "-m", "celery", "-A", "config.celery_app", "beat", "-l", "warning"] + [
        "--scheduler",
        "django_celery_beat.schedulers:DatabaseScheduler",
    ]


def object_store_start(logs: Path):
    """An S3 server of this run's own (config/s3server.py), its buckets kept in a file across a stop, and
    STORAGE_URL naming a bucket on it: raw files and previews go there."""
    from config.devstack import TestObjectStore
    from config.storage import object_store_parse

    server = TestObjectStore(logs / "s3.log", data=logs / "s3-buckets.pickle")
    server.start()
    server.wait_ready()
    url = f"s3+http://chaos:chaos-secret@127.0.0.1:{server.port}/chaos?region=us-east-1"
    object_store_parse(url).client().create_bucket(Bucket="chaos")
    os.environ["STORAGE_URL"] = url
    return server


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


OVER = ("success", "partial", "failed")


def all_over(runs) -> bool:
    """The fan-outs ended, and so did each reader's initial run; the last ingestion run of each reader to end
    (beat starts one a minute) left nothing undecided: what an outage interrupted is taken by a later cycle, as in
    production."""
    from django.db import connection

    from ingestion.models import IngestionRun

    try:
        if any(type(run).objects.get(pk=run.pk).status not in OVER for run in runs):
            return False
        ended = IngestionRun.objects.filter(status__in=OVER).order_by("-finished_at")
        return all(ended.filter(account__phone=phone).first().status == "success" for phone in READERS)
    except Exception:
        connection.close()
        return False


def counts(loaded, *, sets: int, groups: int) -> dict:
    from django.core.files.storage import default_storage

    from ingestion.models import IngestionRun, SkippedPackage
    from packages.models import Package, RawFile
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
    raws = RawFile.objects.exclude(object="").filter(purged_at__isnull=True)
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
        "ingestion_runs_interrupted_by_an_outage": IngestionRun.objects.filter(error__contains="outage").count(),
        "raw_files_kept": raws.count(),
        "raw_files_missing_from_the_store": sum(not default_storage.exists(raw.object.name) for raw in raws),
    }


def one_run(label: str, **kwargs) -> dict:
    logs = Path(tempfile.gettempdir()) / f"stashcast-chaos-{label}"  # kept until the next run: why a process stopped
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir()
    object_store = object_store_start(logs)
    try:
        return run_under_faults(label, object_store=object_store, logs=logs, **kwargs)
    finally:
        object_store.stop()


def run_under_faults(
    label: str, *, object_store, logs: Path, sets: int, groups: int, seed: int, fault_every: float, timeout: float
) -> dict:
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
        # Beat's schedule, made to fit runs that go stale in seconds: the reaper every heartbeat, a lost task
        # sent again after a minute (the least allowed), a cycle a minute (what an outage interrupted is
        # taken again by the next cycle).
        "RUNS_REAP_EVERY_SECONDS": str(HEARTBEAT),
        "WORK_RESEND_QUEUED_AFTER_SECONDS": "60",
        "INGEST_INTERVAL_MINUTES": "1",
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
    workers = Supervised(worker_command, name="worker", count=2, logs=logs, env=env)
    beat = Supervised(beat_command, name="beat", count=1, logs=logs, env=env | {"STASHCAST_PROCESS": "beat"})
    workers.keep()
    beat.keep()
    rng = random.Random(seed)
    faults = Counter()
    # What a fault keeps down, and when it comes back; meanwhile other faults still land.
    down: dict[str, float] = {}
    back = {"s3": object_store.start, "beat": beat.keep}
    faults_by_kind = {
        "postgres": restart_postgres,
        "redis": flush_and_restart_redis,
        "s3": object_store.stop,
        "sigkill": lambda: (workers.signal_one(signal.SIGKILL), workers.start()),
        "sigterm": lambda: (workers.signal_one(signal.SIGTERM), workers.start()),
        "beat": lambda: beat.signal_one(signal.SIGKILL),
    }
    # Every kind once in each round of six, in an order the seed draws: a short run still meets them all.
    bag: list[str] = []
    started = time.monotonic()
    runs = start_work(groups)
    next_fault = started + fault_every * rng.uniform(0.5, 1.5)
    try:
        while not all_over(runs) and time.monotonic() - started < timeout:
            time.sleep(2)
            now = time.monotonic()
            for kind in [kind for kind, until in down.items() if now >= until]:
                print(f"  {now - started:6.1f} s: {kind} back", flush=True)
                back[kind]()
                del down[kind]
            workers.keep()
            if "beat" not in down:
                beat.keep()
            if fault_every and now >= next_fault:
                bag = bag or rng.sample(list(faults_by_kind), len(faults_by_kind))
                fault = next((kind for kind in bag if kind not in down), None)  # what is down waits its turn
                if fault is not None:
                    bag.remove(fault)
                    print(f"  {now - started:6.1f} s: {fault}", flush=True)
                    faults_by_kind[fault]()
                    if fault in OUTAGE_SECONDS:
                        down[fault] = time.monotonic() + OUTAGE_SECONDS[fault]
                    faults[fault] += 1
                next_fault = time.monotonic() + fault_every * rng.uniform(0.5, 1.5)
    finally:
        wall = time.monotonic() - started
        for kind in down:
            back[kind]()
        workers.stop()
        beat.stop()
        object_store.wait_ready()
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
    print(f"\n{'':40}{'calm':>10}{'chaos':>10}")
    for key in results["calm"]:
        if key != "faults":
            print(f"{key:40}{results['calm'][key]!s:>10}{results['chaos'][key]!s:>10}")
    print(f"faults injected: {results['chaos']['faults']}")


if __name__ == "__main__":
    main()
