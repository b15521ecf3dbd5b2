"""Previews drawn for 1,000 packages in one backfill, and the console's speed meanwhile.

Seeds 1,000 listed zip packages, each with a kept raw file holding one small STL (about 1,300 triangles) and no
preview. Measures the dashboard and the Packages page (p50/p95 through Django's test client, as a superuser)
with nothing else running, then runs `manage.py remake_previews` in a process of its own (a worker's work: each
package listed again in the listing child, its model drawn) and measures the same pages again while it runs.
Prints both side by side, the backfill's wall time, the previews made, and the machine's load average.

    .venv/bin/python -m bench.preview_backfill [--packages 1000] [--requests 30]
"""

import argparse
import io
import os
import statistics
import subprocess
import sys
import time
import zipfile

from bench.harness import bench_django, catalog_seed

PAGES = (("dashboard", "/"), ("packages", "/packages/"))


def small_zip() -> bytes:
    import trimesh

    model = trimesh.creation.icosphere(subdivisions=3).export(file_type="stl")
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("kit/figure.stl", model)
    return out.getvalue()


def seed(count: int) -> None:
    import hashlib

    from django.core.files.base import ContentFile
    from django.core.files.storage import default_storage
    from django.utils import timezone

    from accounts.models import Chat
    from packages.models import MetadataStatus, Package, RawFile

    chat = Chat.objects.create(telegram_id=10_001, title="Models", type="channel")
    catalog_seed(packages=count, files_per_package=1, chats=[chat], now=timezone.now())
    data = small_zip()
    digest = hashlib.sha256(data).hexdigest()
    for n, package in enumerate(Package.objects.order_by("pk")):
        name = f"model {n}.zip"
        raw = RawFile.objects.create(
            file_uid=f"bench-{n}", file_name=name, size=len(data), hash=digest, processed_at=timezone.now()
        )
        raw.object.save(f"bench/{n}.zip", ContentFile(data), save=True)
        package.file_name, package.metadata_status, package.preview = name, MetadataStatus.COMPLETE, None
        package.save(update_fields=["file_name", "metadata_status", "preview"])
        package.raw_files.add(raw)
    assert default_storage.exists(raw.object.name)


def measure(client, url: str, requests: int) -> list[float]:
    """Milliseconds of `requests` requests of `url`, after one to warm caches and connections."""
    client.get(url)
    times = []
    for _ in range(requests):
        started = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - started) * 1000)
        assert response.status_code == 200, (url, response.status_code)
    return times


def p50_p95(times: list[float]) -> tuple[float, float]:
    times = sorted(times)
    return statistics.median(times), times[max(0, int(len(times) * 0.95) - 1)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--packages", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=30)
    args = parser.parse_args()
    bench_django("preview_backfill")
    from django.contrib.auth import get_user_model
    from django.test import Client

    from packages.models import Package

    seed(args.packages)
    client = Client(HTTP_HOST="localhost")
    client.force_login(get_user_model().objects.create_superuser("bench", password="x"))
    before = {name: measure(client, url, args.requests) for name, url in PAGES}

    started = time.monotonic()
    backfill = subprocess.Popen(
        [sys.executable, "manage.py", "remake_previews"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    during = {name: [] for name, _ in PAGES}
    rounds = 0
    while backfill.poll() is None:
        for name, url in PAGES:
            during[name] += measure(client, url, args.requests)
        rounds += 1
    out, err = backfill.communicate()
    wall = time.monotonic() - started
    assert backfill.returncode == 0, err[-2000:]
    made = Package.objects.filter(preview__source="render").count()

    print(f"load average (1, 5, 15 min): {os.getloadavg()}; {os.cpu_count()} cores")
    print(f"backfill: {args.packages} packages in {wall:.1f} s ({args.packages / wall:.1f} a second), {made} drawn")
    print(f"pages measured {rounds} time(s) during it, {args.requests} requests each")
    print("| page | before: p50, p95 ms | during: p50, p95 ms |")
    print("| --- | --- | --- |")
    for name, _ in PAGES:
        (b50, b95), (d50, d95) = p50_p95(before[name]), p50_p95(during[name])
        print(f"| {name} | {b50:.1f}, {b95:.1f} | {d50:.1f}, {d95:.1f} |")
    print(out.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
