"""Pages under load: 20 operators at once, logged in, over the main pages and the package search, against
gunicorn, at 100,000 packages and 1,000,000 listed files (the data of bench/dashboard.py).

Locust (headless) plays the operators (bench/locustfile.py); this script seeds the data, starts gunicorn on a
free loopback port, runs locust, stops gunicorn and prints each page's p50/p95/p99 and errors (goal: p95 ≤
200 ms on every page, 0 errors).

    .venv/bin/python -m bench.load [--users 20] [--seconds 60] [--spawn-rate 2] [--web-workers 4] [--conn-max-age 60]
        [--keep-data] [--servers gunicorn,runserver]

Besides the times, it prints the CPU the gunicorn workers spent per request: on a machine shared with other
work the times say how busy the machine was, the CPU what a page costs.
"""

import argparse
import csv
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.harness import bench_django

ROOT = Path(__file__).resolve().parent.parent


def operators_create(count: int, password: str) -> None:
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from core.roles import OPERATORS_GROUP

    group, _ = Group.objects.get_or_create(name=OPERATORS_GROUP)
    for number in range(count):
        user, _ = get_user_model().objects.get_or_create(username=f"operator-{number}")
        user.set_password(password)
        user.save()
        user.groups.add(group)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_for(port: int, process: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"gunicorn stopped (exit {process.returncode})")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise SystemExit("gunicorn did not start listening")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--seconds", type=int, default=60)
    # Operators starting a second: people do not all log in within the same second (a login costs ~0.3 s of
    # CPU for its password hash, so 20 at once hold every page up for seconds).
    parser.add_argument("--spawn-rate", type=float, default=2)
    parser.add_argument("--web-workers", type=int, default=4)
    # As compose's web runs: each gunicorn worker keeps its database connection (DATABASE_CONN_MAX_AGE).
    parser.add_argument("--conn-max-age", type=int, default=60)
    parser.add_argument("--keep-data", action="store_true", help="reuse the data of a previous run when it is there")
    # `gunicorn,runserver`: the same operators against each in turn, side by side in one run (issue 38).
    parser.add_argument("--servers", default="gunicorn")
    args = parser.parse_args()
    bench_django("load", keep=args.keep_data)
    from bench.dashboard import seed
    from reminders.models import ReminderRunTarget

    if not ReminderRunTarget.objects.exists():  # the last rows the seed writes
        started = time.monotonic()
        seed()
        print(f"seeded in {time.monotonic() - started:.0f} s")
    password = secrets.token_urlsafe(12)
    operators_create(args.users, password)

    env = {
        **os.environ,
        "BENCH_OPERATOR_PASSWORD": password,
        "BENCH_OPERATOR_COUNT": str(args.users),
        "DATABASE_CONN_MAX_AGE": str(args.conn_max_age),
    }
    logs = Path(tempfile.mkdtemp(prefix="stashcast-bench-load-"))
    for server in args.servers.split(","):
        cpu = _measure(server, args, env, logs)
        report(logs / f"{server}_stats.csv", args, cpu, server)
    print(f"locust and server logs: {logs}")


def _server_command(server: str, port: int, args, logs: Path) -> list[str]:
    if server == "runserver":  # what `make run` served pages with before it ran gunicorn: threaded, one process
        return [sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"]
    return [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}"] + [
        "--workers",
        str(args.web_workers),
        "--error-logfile",
        str(logs / "gunicorn.log"),
    ]


def _measure(server: str, args, env: dict[str, str], logs: Path) -> float:
    """One locust pass against one server; returns the CPU its processes spent."""
    port = _free_port()
    web = subprocess.Popen(
        _server_command(server, port, args, logs),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(logs / f"{server}.log", "w"),  # noqa: SIM115 -- closed when the script ends
    )
    try:
        _wait_for(port, web)
        for _ in range(4 * args.web_workers):  # every worker imports the views and templates before the clock
            urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=60).read()
        cpu_before = _server_cpu(web.pid)
        subprocess.run(
            [sys.executable, "-m", "locust", "-f", str(ROOT / "bench" / "locustfile.py"), "--headless"]
            + ["--users", str(args.users), "--spawn-rate", str(args.spawn_rate), "--run-time", f"{args.seconds}s"]
            + ["--host", f"http://127.0.0.1:{port}", "--csv", str(logs / server), "--only-summary"]
            + ["--loglevel", "WARNING", "--stop-timeout", "10"],
            cwd=ROOT,
            env=env,
            check=False,
            stdout=subprocess.DEVNULL,
            stderr=open(logs / "locust.log", "a"),  # noqa: SIM115 -- closed when the script ends
        )
        return _server_cpu(web.pid) - cpu_before
    finally:
        web.terminate()
        web.wait(timeout=30)


def _server_cpu(pid: int) -> float:
    """CPU seconds (user + system) the server's processes have used so far (gunicorn's workers, or runserver)."""
    import psutil

    process = psutil.Process(pid)
    return sum(sum(child.cpu_times()[:2]) for child in process.children()) + sum(process.cpu_times()[:2])


def report(stats: Path, args, cpu: float, server: str) -> None:
    what = f"gunicorn {args.web_workers} workers" if server == "gunicorn" else "Django's development server (runserver)"
    print(
        f"\n{args.users} operators ({args.spawn_rate:g} starting a second), {args.seconds} s, {what}, "
        f"{os.cpu_count()} CPUs seen (shared with whatever else runs), load average {os.getloadavg()[0]:.1f}"
    )
    print(f"{'page':<16} {'requests':>9} {'errors':>7} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7} {'max ms':>7}")
    with open(stats) as file:
        for row in csv.DictReader(file):
            name = row["Name"] if row["Name"] != "Aggregated" else "all"
            print(
                f"{name:<16} {row['Request Count']:>9} {row['Failure Count']:>7} {row['50%']:>7} {row['95%']:>7} "
                f"{row['99%']:>7} {float(row['Max Response Time']):>7.0f}"
            )
            if name == "all":
                print(f"server CPU: {cpu * 1000 / int(row['Request Count']):.1f} ms a request")


if __name__ == "__main__":
    main()
