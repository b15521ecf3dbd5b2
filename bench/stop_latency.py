"""How soon a reminder run asleep in a wait stops after the operator's Cancel or Pause.

Each round fires a run of two parts to groups in slow mode (SLOW_MODE s); once every group has its first part, the
run sleeps in their slow mode. The operator cancels (odd rounds pause) it; the figure is the time from that until
the sending process has let go of the account and ended (goal < 2 s), and the heartbeat's watch queries a second.

    .venv/bin/python -m bench.stop_latency [--rounds 6] [--groups 3]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.harness import bench_django, reminder_pace_scaled, world_authorize

SENDER = "+15550000301"
GROUP_BASE = 810_000
SLOW_MODE = 60


def worker(run_id: str, out_file: str) -> None:
    import django

    django.setup()
    from reminders import fanout

    status = fanout.reminder_run_execute(run_id=int(run_id))
    Path(out_file).write_text(json.dumps({"status": status, "ended": time.time()}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--groups", type=int, default=3)
    parser.add_argument("--worker", nargs=2)
    args = parser.parse_args()
    if args.worker:
        return worker(*args.worker)
    reminder_pace_scaled(scale=30, burst=10)
    work = bench_django("stop_latency")
    from accounts.models import Chat, TelegramAccount
    from reminders.models import ReminderRun
    from reminders.services import (
        PartSpec,
        ReminderSpec,
        TargetSpec,
        reminder_create,
        reminder_fire,
        reminder_run_cancel,
        reminder_run_pause,
    )

    latencies = []
    for round_ in range(args.rounds):
        base = GROUP_BASE + round_ * 100  # fresh groups each round: no slow mode left from the last one
        world_authorize(
            {
                "accounts": [{"phone": SENDER, "first_name": "Sender"}],
                "chats": [
                    {
                        "id": base + n,
                        "title": f"Group {round_}-{n}",
                        "type": "supergroup",
                        "members": [SENDER],
                        "slow_mode_seconds": SLOW_MODE,
                    }
                    for n in range(args.groups)
                ],
            }
        )
        reminder = reminder_create(
            spec=ReminderSpec(
                account=TelegramAccount.objects.get(phone=SENDER),
                name=f"Round {round_}",
                timezone="UTC",
                window_start_hour=0,
                window_end_hour=24,
                parts=[PartSpec(text="Doors open at nine"), PartSpec(text="Bring a friend")],
                targets=[
                    TargetSpec(chat=chat)
                    for chat in Chat.objects.filter(telegram_id__gte=base, telegram_id__lt=base + 100)
                ],
            )
        )
        run = reminder_fire(reminder=reminder, enqueue=False)
        out = work / f"round-{round_}.json"
        process = subprocess.Popen(
            [sys.executable, "-m", "bench.stop_latency", "--worker", str(run.pk), str(out)], env=os.environ
        )
        while run.targets.filter(parts_sent__gte=1).count() < args.groups:
            time.sleep(0.05)
        time.sleep(1)  # asleep in the slow mode of every group
        stop = reminder_run_pause if round_ % 2 else reminder_run_cancel
        stopped = time.time()
        stop(run=ReminderRun.objects.get(pk=run.pk))
        process.wait(timeout=SLOW_MODE)
        ended = json.loads(out.read_text())["ended"]
        latencies.append(ended - stopped)
        print(
            f"round {round_}: {stop.__name__.removeprefix('reminder_run_')} → process ended in {ended - stopped:.2f} s"
        )
    print(
        f"stop latency over {len(latencies)} rounds: median {statistics.median(latencies):.2f} s, "
        f"max {max(latencies):.2f} s (goal < 2 s; slow mode {SLOW_MODE} s, without the wake it was the slow mode)"
    )


if __name__ == "__main__":
    main()
