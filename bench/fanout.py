"""Reminder fan-out: 1,000 groups × (text + image) on the sandbox, with a time-scaled budget.

Prints the achieved send rate against the configured one (goal ≥ 0.95), media uploads per run
(goal 1), database queries per group (goal ≤ 3), and two accounts sending in parallel against
one (goal ≥ 1.8×). Each run is sent by its own OS process, as a Celery worker would.

Time-scaled: the pace (40 a minute), the burst and the 200–500 ms jitter between parts keep
their proportions, made SCALE times faster, so 2,000 messages take seconds instead of an hour.

`--only pace`: the pace learning a limit Telegram hides. The sandbox answers FLOOD_WAIT above
HIDDEN_LIMIT sends in any (time-scaled) minute, under a ceiling of 40; prints the most sends in any
minute against the ceiling + burst, FloodWaits after the first (goal ≤ 3), whether the run finished,
and the achieved rate against the hidden limit (goal within 20 %). Then PEER_FLOOD with a second run
of the account waiting: requests after the PEER_FLOOD answer, and whether both runs paused.

    .venv/bin/python -m bench.fanout [--groups 1000] [--scale 150] [--only throughput|pace]
        [--hidden-limit 30] [--pace-groups 1200] [--pace-scale 20]
"""

import argparse
import json
import math
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

from bench.harness import bench_django, reminder_pace_scaled

SENDERS = ("+15550000201", "+15550000202")
GROUP_BASE = 800_000
BURST = 3


def worker(run_id: str, out_file: str) -> None:
    """Send one run in this process, counting the database queries it makes."""
    import django

    django.setup()
    from django.db import connection

    from reminders import fanout

    queries = 0

    def count(execute, sql, params, many, context):
        nonlocal queries
        queries += 1
        return execute(sql, params, many, context)

    started = time.monotonic()
    with connection.execute_wrapper(count):
        status = fanout.reminder_run_execute(run_id=int(run_id))
    Path(out_file).write_text(json.dumps({"status": status, "queries": queries, "seconds": time.monotonic() - started}))


def send_in_processes(work: Path, runs) -> list[dict]:
    procs, outs = [], []
    for run in runs:
        out = work / f"run-{run.pk}.json"
        outs.append(out)
        procs.append(
            subprocess.Popen([sys.executable, "-m", "bench.fanout", "--worker", str(run.pk), str(out)], env=os.environ)
        )
    for proc in procs:
        if proc.wait() != 0:
            raise SystemExit("a fan-out process failed; see above")
    return [json.loads(out.read_text()) for out in outs]


def png(size: int = 64) -> bytes:
    """A valid PNG of noise-free stripes, a few KiB."""
    import struct
    import zlib

    raw = b"".join(b"\x00" + bytes([row % 256, 90, 200]) * size for row in range(size))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def sent_times(world, phone: str) -> list[float]:
    rows = world.conn.execute("SELECT date FROM messages WHERE sender = ? ORDER BY date", (phone,))
    return [row["date"] for row in rows]


def forget_paces() -> None:
    """Account ids start again in the fresh database: an earlier run's learned pace or rest must not carry over."""
    import redis
    from django.conf import settings

    from core.ratelimit import KEY_PREFIX

    client = redis.Redis.from_url(settings.REDIS_URL)
    keys = list(client.scan_iter(f"{KEY_PREFIX}*"))
    if keys:
        client.delete(*keys)


def max_in_window(times: list[float], window: float) -> int:
    """The most sends in any `window` seconds."""
    most, first = 0, 0
    for last, at in enumerate(times):
        while at - times[first] >= window:
            first += 1
        most = max(most, last - first + 1)
    return most


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=1000)
    parser.add_argument("--scale", type=int, default=150, help="How many times faster than real time.")
    parser.add_argument("--rtt-ms", type=int, default=80, help="Telegram's round trip, in real time.")
    parser.add_argument("--only", choices=["throughput", "pace"])
    parser.add_argument("--hidden-limit", type=int, default=30, help="Sends a minute Telegram allows, unseen.")
    parser.add_argument("--pace-groups", type=int, default=1200)
    parser.add_argument("--pace-scale", type=int, default=20, help="60 must divide by it (the sandbox's window).")
    parser.add_argument("--worker", nargs=2)
    args = parser.parse_args()
    if args.worker:
        return worker(*args.worker)
    if args.only == "pace":
        return pace_learning(args)

    per_minute = reminder_pace_scaled(scale=args.scale, burst=BURST)
    work = bench_django("fanout")
    forget_paces()
    from django.conf import settings
    from django.core.files.base import ContentFile
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from accounts.models import Chat, TelegramAccount
    from operations.sandbox import sandbox_authorize
    from reminders.services import PartSpec, ReminderSpec, TargetSpec, media_create, reminder_create, reminder_fire
    from telegram.records import PART_SIZE
    from telegram.sandbox.loader import world_load
    from telegram.sandbox.world import World

    world_load(
        settings.SANDBOX_PATH,
        {
            # Every request takes Telegram's round trip, sped up like the rest of the run.
            "network": {"rtt_ms": max(1, round(args.rtt_ms / args.scale))},
            "accounts": [{"phone": phone, "first_name": f"Sender {n}"} for n, phone in enumerate(SENDERS)],
            "chats": [
                {"id": GROUP_BASE + n, "title": f"Group {n:04d}", "type": "supergroup", "members": list(SENDERS)}
                for n in range(args.groups)
            ],
        },
    )
    sandbox_authorize()
    world = World(settings.SANDBOX_PATH)
    picture = media_create(file=ContentFile(png(), name="flyer.png"), name="flyer.png")
    chats = list(Chat.objects.order_by("telegram_id"))
    reminders = [
        reminder_create(
            spec=ReminderSpec(
                account=TelegramAccount.objects.get(phone=phone),
                name=f"Bench {phone}",
                timezone="UTC",
                window_start_hour=0,
                window_end_hour=24,
                parts=[PartSpec(text="Weekend sale: everything half price."), PartSpec(media=picture, caption="Flyer")],
                targets=[TargetSpec(chat=chat) for chat in chats],
            )
        )
        for phone in SENDERS
    ]
    messages = args.groups * 2
    print(f"{args.groups} groups × (text + image) = {messages} messages a run; pace {per_minute}/min, burst {BURST}")
    print(f"time {args.scale}× real time; round trip {args.rtt_ms} ms in real time")

    # One account alone
    with CaptureQueriesContext(connection) as firing:
        run = reminder_fire(reminder=reminders[0], enqueue=False)
    world.stats_reset()
    (alone,) = send_in_processes(work, [run])
    times = sent_times(world, SENDERS[0])
    assert alone["status"] == "success" and len(times) == messages, (alone, len(times))
    achieved = (len(times) - BURST) / (times[-1] - times[0]) * 60  # the burst goes out at once
    calls = world.stats()["calls"][SENDERS[0]]
    upload_calls = calls.get("upload.saveFilePart", 0) + calls.get("messages.uploadMedia", 0)
    uploads = upload_calls / (math.ceil(picture.size / PART_SIZE) + 1)
    print(f"achieved {achieved:.0f}/min of {per_minute}/min: {achieved / per_minute:.3f} (goal ≥ 0.95)")
    print(f"media uploads per run: {uploads:g} (goal 1)")
    print(
        f"database queries per group: {alone['queries'] / args.groups:.3f} (goal ≤ 3); "
        f"{alone['queries']} in the sending process, firing {len(firing.captured_queries)}"
    )

    # Two accounts at once, each a fresh run of the same size
    runs = [reminder_fire(reminder=reminder, enqueue=False) for reminder in reminders]
    started = datetime.now().timestamp()
    both = send_in_processes(work, runs)
    assert all(report["status"] == "success" for report in both), both
    parallel = [t for phone in SENDERS for t in sent_times(world, phone) if t >= started]
    assert len(parallel) == 2 * messages, len(parallel)
    single_rate = len(times) / (times[-1] - times[0])
    parallel_rate = len(parallel) / (max(parallel) - min(parallel))
    print(f"two accounts in parallel: {parallel_rate / single_rate:.2f}× one account (goal ≥ 1.8×)")
    if args.only is None:
        print()
        pace_learning(args, work=work)


CEILING = 40  # a minute, REMINDER_MAX_SEND_PER_MINUTE's default


def pace_learning(args, work: Path | None = None) -> None:
    """One account, one text to many groups, a hidden limit of its own; then PEER_FLOOD with a run waiting."""
    scale, minute = args.pace_scale, 60 / args.pace_scale
    if 60 % scale:
        raise SystemExit("--pace-scale must divide 60 (the sandbox counts its window in whole seconds)")
    os.environ.update(
        REMINDER_MAX_SEND_PER_MINUTE=str(CEILING * scale),
        REMINDER_SEND_BURST=str(BURST),
        REMINDER_PART_JITTER_MIN_MS="0",
        REMINDER_PART_JITTER_MAX_MS="1",
    )
    if work is None:
        work = bench_django("fanout")
        forget_paces()
    from django.conf import settings

    settings.REMINDER_MAX_SEND_PER_MINUTE = CEILING * scale
    from accounts.models import Chat, TelegramAccount
    from core.models import RunStatus
    from operations.sandbox import sandbox_authorize
    from reminders.models import ReminderRun
    from reminders.services import PartSpec, ReminderSpec, TargetSpec, reminder_create, reminder_fire
    from telegram.sandbox.loader import world_load
    from telegram.sandbox.world import World

    phone = "+15550000301"
    groups = args.pace_groups

    def load(account: dict, faults=()) -> World:
        world_load(
            settings.SANDBOX_PATH,
            {
                "network": {"rtt_ms": max(1, round(args.rtt_ms / scale))},
                "quirks": {"flood_window_seconds": round(minute)},
                "accounts": [{"phone": phone, "first_name": "Learner", **account}],
                "chats": [
                    {"id": GROUP_BASE + n, "title": f"Group {n:04d}", "type": "supergroup", "members": [phone]}
                    for n in range(groups)
                ],
                "faults": list(faults),
            },
        )
        sandbox_authorize()
        return World(settings.SANDBOX_PATH)

    def reminder(name: str, chats):
        return reminder_create(
            spec=ReminderSpec(
                account=TelegramAccount.objects.get(phone=phone),
                name=name,
                timezone="UTC",
                window_start_hour=0,
                window_end_hour=24,
                parts=[PartSpec(text="Weekend sale: everything half price.")],
                targets=[TargetSpec(chat=chat) for chat in chats],
            )
        )

    world = load({"flood_above_per_minute": args.hidden_limit})
    chats = list(Chat.objects.filter(telegram_id__gte=GROUP_BASE).order_by("telegram_id")[:groups])
    run = reminder_fire(reminder=reminder("Learning", chats), enqueue=False)
    print(
        f"{groups} groups × 1 text; ceiling {CEILING}/min, burst {BURST}, hidden limit {args.hidden_limit}/min; "
        f"time {scale}× real time (a minute is {minute:g} s)"
    )
    (report,) = send_in_processes(work, [run])
    times = sent_times(world, phone)
    floods = world.stats()["flood_waits"].get(phone, 0)
    most = max_in_window(times, minute)
    achieved = (len(times) - 1) / (times[-1] - times[0]) * minute
    steady = times[len(times) // 2 :]
    steady_rate = (len(steady) - 1) / (steady[-1] - steady[0]) * minute
    account = TelegramAccount.objects.get(phone=phone)
    print(f"run: {report['status']}, {len(times)} of {groups} sent (goal: finishes)")
    print(f"most sends in any minute: {most} (goal ≤ ceiling + burst = {CEILING + BURST})")
    print(f"FloodWaits: {floods}, after the first: {max(0, floods - 1)} (goal ≤ 3)")
    print(
        f"achieved {achieved:.1f}/min over the run, {steady_rate:.1f}/min over its second half, "
        f"of the hidden {args.hidden_limit}/min: {achieved / args.hidden_limit:.2f} / "
        f"{steady_rate / args.hidden_limit:.2f} (goal 0.8–1.2)"
    )
    learned = (account.send_budget_per_minute or CEILING * scale) / scale
    print(f"pace learned: {learned:.1f}/min ({account.send_budget_reason or 'unchanged'})")

    # PEER_FLOOD: the account rests, and every run of it pauses
    world = load({}, faults=[{"op": "send", "error": "peer_flood", "after": 20, "times": 10**6}])
    chats = list(Chat.objects.filter(telegram_id__gte=GROUP_BASE).order_by("telegram_id")[:200])
    runs = [
        reminder_fire(reminder=reminder(name, part), enqueue=False)
        for name, part in (("Sending", chats[:100]), ("Waiting", chats[100:]))
    ]
    world.stats_reset()
    send_in_processes(work, runs)
    requests = world.stats()["calls"].get(phone, {}).get("messages.sendMessage", 0)
    statuses = [ReminderRun.objects.get(pk=run.pk).status for run in runs]
    print(
        f"PEER_FLOOD after 20 sends: {requests - 21} more send requests after its answer "
        f"(the groups already in flight; goal ≤ {settings.REMINDER_GROUP_CONCURRENCY - 1}); "
        f"runs of the account: {', '.join(statuses)} (goal: every one paused)"
    )
    assert all(status == RunStatus.PAUSED for status in statuses), statuses


if __name__ == "__main__":
    main()
