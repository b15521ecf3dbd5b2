"""Shared set-up for benchmarks: the local stack, a fresh database, a sandbox world.

.venv/bin/python -m bench.ingest_datapath
"""

import atexit
import os
import shutil
import tempfile
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
