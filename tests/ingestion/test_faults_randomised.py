"""Random faults over a world of archives: each ends ingested exactly once, or skipped with a reason."""

import random
from collections import Counter

import pytest

from ingestion.models import SkippedPackage
from packages.models import Package
from tests.ingestion.conftest import SOURCE, WRITER, run_cycle, world
from tests.ingestion.test_pipeline import dump, uploads

pytestmark = pytest.mark.django_db

ERRORS = ["flood_wait", "network", "file_reference_expired"]


@pytest.fixture(autouse=True)
def storage(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.INGEST_STAGING_DIR = tmp_path / "staging"
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


@pytest.mark.parametrize("seed", range(12))
def test_every_archive_is_ingested_once_or_skipped_with_a_reason(ingest_world, seed):
    ingest_world(random_world(seed))

    for _ in range(4):
        run_cycle()

    source = [m for m in dump(SOURCE)["messages"] if m["document"]]
    archives = [m for m in source if not m["document"]["name"].endswith(".bin")]
    first_ids = {m["id"] for m in archives if not m["document"]["name"].endswith((".002", ".003", ".004"))}
    ingested = {message_id for package in Package.objects.all() for message_id in package.source_message_ids}
    skipped = {row.message_id: row for row in SkippedPackage.objects.all()}
    for message_id in first_ids:
        assert (message_id in ingested) != (message_id in skipped), f"message {message_id} in seed {seed}"
    assert all(row.reason and row.error_message for row in skipped.values())
    per_content = Counter(m["document"]["sha256"] for m in uploads())
    assert all(count == 1 for count in per_content.values()), "nothing uploaded twice"
    assert all(m["sender"] == WRITER for m in uploads())
