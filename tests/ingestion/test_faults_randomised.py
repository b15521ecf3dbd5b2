"""Random faults over a world of archives: each ends ingested exactly once, or skipped with a reason."""

import random
import time
from collections import Counter
from datetime import timedelta

import pytest
from django.utils import timezone

from core.runs import runs_reap
from ingestion.models import Channel, IngestionRun, SkippedPackage
from ingestion.recovery import packages_check_destination
from packages.models import Package
from packages.services import raw_files_purge
from telegram.sandbox.faults import SandboxCrash
from telegram.sandbox.world import World
from tests.support.ingestion import DESTINATION, SOURCE, WRITER, dump, run_cycle, uploads, world

pytestmark = [pytest.mark.django_db, pytest.mark.large]

ERRORS = ["flood_wait", "network", "file_reference_expired"]


@pytest.fixture(autouse=True)
def one_transient_retry(settings):
    settings.INGEST_TRANSIENT_RETRIES = 1


def random_world(seed: int):
    rng = random.Random(seed)
    messages, next_id = [], 10
    for n in range(rng.randint(4, 8)):
        kind = rng.choice(["zip", "7z", "volumes", "model", "noise"])
        if kind == "zip":
            document = {"name": f"a{n}.zip", "archive": [{"path": f"a{n}/m.stl", "size": rng.randint(10, 5000)}]}
        elif kind == "7z":
            document = {"name": f"b{n}.7z", "archive": [{"path": f"b{n}.stl", "size": rng.randint(10, 5000)}]}
        elif kind == "volumes":
            size = rng.randint(120_000, 300_000)
            document = {"name": f"c{n}.7z", "archive": [{"path": f"c{n}.obj", "size": size}], "volume_size": 100_000}
        elif kind == "model":
            document = {"name": f"d{n}.stl", "size": rng.randint(10, 9000), "seed": n}
        else:
            document = {"name": f"e{n}.bin", "size": 100, "seed": n}
        messages.append({"id": next_id, "document": document})
        next_id += 10
    faults = []
    for _ in range(rng.randint(1, 5)):
        op = rng.choice(["download", "upload", "history"])
        fault = {
            "op": op,
            "error": rng.choice(ERRORS if op == "download" else ["flood_wait", "network"]),
            "seconds": 0,
            "times": rng.randint(1, 4),
            "after": rng.randint(0, 3),
        }
        if op == "download":
            fault["message"] = rng.choice(messages)["id"]
        faults.append(fault)
    return world(messages=messages, faults=faults)


def assert_each_archive_ingested_or_skipped(seed: int) -> tuple[set[int], dict[int, SkippedPackage]]:
    """Every archive set still in the source is a package or a skipped package, never both, never neither."""
    source = [m for m in dump(SOURCE)["messages"] if m["document"]]
    archives = [m for m in source if not m["document"]["name"].endswith(".bin")]
    first_ids = {m["id"] for m in archives if not m["document"]["name"].endswith((".002", ".003", ".004"))}
    ingested = {message_id for package in Package.objects.all() for message_id in package.source_message_ids}
    skipped = {row.message_id: row for row in SkippedPackage.objects.all()}
    for message_id in first_ids:
        assert (message_id in ingested) != (message_id in skipped), f"message {message_id} in seed {seed}"
    return first_ids, skipped


@pytest.mark.parametrize("seed", range(12))
def test_every_archive_is_ingested_once_or_skipped_with_a_reason(ingest_world, seed):
    ingest_world(random_world(seed))

    for _ in range(4):
        run_cycle()

    first_ids, skipped = assert_each_archive_ingested_or_skipped(seed)
    assert all(row.reason and row.error_message for row in skipped.values())
    per_content = Counter(m["document"]["sha256"] for m in uploads())
    assert all(count == 1 for count in per_content.values()), "nothing uploaded twice"
    assert all(m["sender"] == WRITER for m in uploads())


# -- Telegram's time scales and people, in one seeded world ---------------------------------------------------------


def hostile_world(seed: int) -> tuple[dict, random.Random]:
    rng = random.Random(seed)
    data = random_world(seed)
    for message in data["chats"][0]["messages"]:
        if rng.random() < 0.3:  # posted while the cycles run, volume after volume
            message["arrives_after_seconds"] = rng.randint(1, 4)
            message["volume_interval_seconds"] = rng.randint(0, 2)
    data["quirks"] = {"auth_key_duplicated": True, "random_id_memory_seconds": 3600}
    data["network"] = {"rtt_ms": 10, "connection_bytes_per_s": rng.choice([2_000_000, 8_000_000])}
    if rng.random() < 0.7:  # the process dies somewhere in a transfer or a send
        data["faults"].append(
            {"op": rng.choice(["download", "upload", "send"]), "error": "crash", "after": rng.randint(0, 6)}
        )
    return data, rng


@pytest.mark.parametrize("seed", range(6))
def test_people_time_purges_and_deaths_lose_nothing_and_upload_nothing_twice(ingest_world, settings, seed):
    settings.INGEST_SET_SETTLE_SECONDS = 2
    settings.INGEST_SKIP_RECENT_SCAN_WINDOW_SECONDS = 0
    data, rng = hostile_world(seed)
    sandbox = ingest_world(data)
    Channel.objects.update(expiration_days=0)
    deaths = deleted_by_people = 0

    for cycle in range(8):
        try:
            run_cycle()
        except SandboxCrash:  # the worker died mid-run: the reaper fails its run, the next cycle goes on
            deaths += 1
            runs_reap(model=IngestionRun, stale_after=timedelta(0), max_requeues=0)
        if cycle in (1, 3) and rng.random() < 0.7 and uploads():  # someone deletes an upload in the destination
            sandbox.message_delete(DESTINATION, rng.choice(uploads())["id"])
            deleted_by_people += 1
        if cycle == 2:
            raw_files_purge(now=timezone.now() + timedelta(days=1))
        packages_check_destination()
        time.sleep(0.7)
    for _ in range(4):  # then quiet cycles, as Telegram settles
        run_cycle()
        packages_check_destination()
        time.sleep(0.5)

    first_ids, skipped = assert_each_archive_ingested_or_skipped(seed)
    live = {m["id"] for m in uploads()}
    for package in Package.objects.all():
        assert set(package.dest_message_ids) <= live, f"{package.file_name} lost its upload (seed {seed})"
    per_content = Counter(m["document"]["sha256"] for m in uploads())
    assert all(count == 1 for count in per_content.values()), (
        "nothing uploaded twice",
        [(m["id"], m["document"]["name"], m["random_id"]) for m in uploads()],
        [(p.file_name, p.dest_message_ids, p.upload_generation) for p in Package.objects.all()],
    )
    sessions = World(settings.SANDBOX_PATH).stats()["sessions"]
    assert all(s["duplicated"] == 0 for s in sessions.values()), sessions
    assert deaths + deleted_by_people + len(first_ids) > 0
