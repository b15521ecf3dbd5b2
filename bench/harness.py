"""Shared set-up for benchmarks: the local stack, a fresh database, a sandbox world, one ingestion timed by stage.

.venv/bin/python -m bench.ingest_datapath
"""

import atexit
import os
import shutil
import tempfile
import time
from pathlib import Path


def bench_django(name: str, *, keep: bool = False) -> Path:
    """Start (or reuse) the embedded services, point Django at a fresh database (or, keep=True, at the one a
    previous run left); returns a work folder, removed when the benchmark ends (a 1 GiB transfer leaves
    gigabytes of raw, staged and uploaded copies)."""
    from config.devstack import Stack, ensure_secrets, start_services

    stack = Stack.from_env()
    service_env, _ = start_services(stack)  # left running: the next benchmark reuses them
    os.environ.update({key: value for key, value in ensure_secrets(stack.secret_env).items() if key not in os.environ})
    base_url = os.environ.get("DATABASE_URL") or service_env["DATABASE_URL"]
    os.environ.setdefault("REDIS_URL", service_env.get("REDIS_URL", ""))
    server, _, _ = base_url.rpartition("/")
    database = f"stashcast_bench_{name}"
    _recreate_database(f"{server}/postgres", database, keep=keep)
    os.environ["DATABASE_URL"] = f"{server}/{database}"
    work = Path(tempfile.mkdtemp(prefix=f"stashcast-bench-{name}-"))
    atexit.register(shutil.rmtree, work, ignore_errors=True)
    os.environ["SANDBOX_PATH"] = str(work / "sandbox")
    os.environ["MEDIA_ROOT"] = str(work / "media")
    os.environ["INGEST_STAGING_DIR"] = str(work / "staging")
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    return work


def _recreate_database(admin_url: str, database: str, *, keep: bool = False) -> None:
    import psycopg

    with psycopg.connect(admin_url, autocommit=True) as conn:
        if keep and conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone():
            return
        conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{database}"')


# -- a catalog at scale (dashboard, bot_search) -------------------------------------------------------------------

TAGS = ["minis", "terrain", "busts", "vehicles", "scenery"]
PATH_WORDS = ["dragon", "tower", "goblin", "tile", "bust", "wing", "base", "sword", "shield", "tree"]


def catalog_seed(*, packages: int, files_per_package: int, chats: list, now, destination=None) -> None:
    """`packages` packages (names `creator-<n % 700>/model <n>.zip`, from `chats` in turn, newest first, in the
    archive channel `destination` when given) with `files_per_package` listed files each (a path word of
    PATH_WORDS in every one), their search words as package_search_words_update makes them, in bulk SQL."""
    from django.db import connection
    from django.utils import timezone

    from packages.models import Package

    for start in range(0, packages, 10_000):
        Package.objects.bulk_create(
            Package(
                content_hash=f"{n:064x}",
                file_name=f"creator-{n % 700}/model {n}.zip",
                file_size=n * 1000,
                archive_type="zip",
                source_chat=chats[n % len(chats)],
                source_message_id=n,
                destination_chat=destination,
                dest_message_ids=[n],
                file_count=files_per_package,
                metadata_status="complete",
                creator=f"creator-{n % 700}",
                tags=[TAGS[n % len(TAGS)], *(["sale"] if n % 50 == 0 else [])],
                created_at=now - timezone.timedelta(minutes=n),
            )
            for n in range(start, min(start + 10_000, packages))
        )
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO packages_packagefile (package_id, path, size, compressed_size, crc32, encrypted) "
            "SELECT p.id, 'creator-' || (p.id %% 700) || '/' || (%s::text[])[1 + (p.id + g) %% 10] || '-' || p.id "
            "|| '/part_' || g || '.stl', g * 1000, g * 900, p.id + g, false "
            "FROM packages_package p CROSS JOIN generate_series(1, %s) g",
            [PATH_WORDS, files_per_package],
        )
        # What package_search_words_update does for each package, in one statement.
        cursor.execute(
            "UPDATE packages_package p SET search_words = to_tsvector('simple', regexp_replace("
            "f.text, '[^[:alnum:]]+', ' ', 'g')), name_grams = text_trigrams(f.text), search_text = lower(f.text) "
            "FROM (SELECT package_id, min(pp.file_name) || ' ' || string_agg(path, ' ') AS text "
            "FROM packages_packagefile JOIN packages_package pp ON pp.id = package_id GROUP BY package_id) f "
            "WHERE f.package_id = p.id"
        )


# -- one ingestion through the sandbox server (transfer, bandwidth, ingest_datapath) ------------------------------

MB = 1_000_000
MIB = 1024 * 1024
READER = "+15550000001"


def one_document_world(
    *,
    size: int,
    seed,
    rtt_ms: int,
    connection_mb: float,
    bandwidth_bytes_per_s: int | None = None,
    phone: str = READER,
) -> dict:
    """A world file: one reading account (its bandwidth capped by the world, or not), a source channel holding one
    opaque document of `size` bytes, and the destination; the network is Telegram's shape (a round trip per request,
    each connection passing `connection_mb` MB/s)."""
    return {
        "network": {"rtt_ms": rtt_ms, "connection_bytes_per_s": int(connection_mb * MB)},
        "accounts": [{"phone": phone, "first_name": "Reader", "bandwidth_bytes_per_s": bandwidth_bytes_per_s}],
        "chats": [
            {
                "id": 1001,
                "title": "Source",
                "type": "channel",
                "role": "source",
                "members": [phone],
                "messages": [{"id": 1, "document": {"name": "payload.zip", "size": size, "seed": seed}}],
            },
            {"id": 9000, "title": "Archive", "type": "channel", "role": "destination", "admins": [phone]},
        ],
    }


def world_authorize(world: dict) -> None:
    """Load a world file into this benchmark's sandbox and log its accounts in."""
    from django.conf import settings

    from operations.sandbox import sandbox_authorize
    from telegram.sandbox.loader import world_load

    world_load(settings.SANDBOX_PATH, world)
    sandbox_authorize()


def stage_timer() -> dict[str, float]:
    """Seconds the pipeline spends in its download and upload stages from now on, added up in the dict returned
    ({"download", "upload"})."""
    from ingestion import fetching, uploading

    seconds = {"download": 0.0, "upload": 0.0}

    def timed(owner, name, stage):
        original = getattr(owner, name)

        async def wrapper(*a, **kw):
            started = time.monotonic()
            try:
                return await original(*a, **kw)
            finally:
                seconds[stage] += time.monotonic() - started

        setattr(owner, name, wrapper)

    timed(fetching.FetchStage, "download", "download")
    timed(uploading.UploadStage, "upload", "upload")
    return seconds


def ingest_once(*, chat_id: int | None = None, before=None):
    """One ingestion run of the only account (of one channel, or all), executed here; fails unless it ingested
    exactly one package. `before` is called just before the run starts (to start clocks)."""
    from accounts.models import TelegramAccount
    from ingestion import pipeline
    from ingestion.models import Channel, IngestionRun

    channel = None if chat_id is None else Channel.objects.get(chat__telegram_id=chat_id)
    run = IngestionRun.objects.create(account=TelegramAccount.objects.get(), trigger="command", channel=channel)
    if before is not None:
        before()
    pipeline.ingestion_run_execute(run_id=run.pk)
    run.refresh_from_db()
    assert run.ingested == 1, run.error
    return run


def reminder_pace_scaled(*, scale: int, burst: int) -> int:
    """Set the reminder send pace `scale` times faster than real time (40 sends a minute, 200–500 ms between
    parts, a bucket of `burst`), before Django starts; returns the sends a minute."""
    import math

    per_minute = 40 * scale
    os.environ.update(
        REMINDER_MAX_SEND_PER_MINUTE=str(per_minute),
        REMINDER_SEND_BURST=str(burst),
        REMINDER_PART_JITTER_MIN_MS=str(math.floor(200 / scale)),
        REMINDER_PART_JITTER_MAX_MS=str(math.ceil(500 / scale)),
    )
    return per_minute
