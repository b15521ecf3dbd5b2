"""Ingestion in tests: a source channel and a destination written by its own account, one ingestion cycle run
in this process, what the destination channel received, and a lock another worker holds."""

import io
import json
import time
from contextlib import contextmanager

import psycopg
from django.conf import settings
from django.core.management import call_command

from accounts.models import TelegramAccount
from core.leases import connection_params
from core.locks import lock_key
from core.models import RunStatus
from ingestion.models import IngestionRun
from ingestion.pipeline import ingestion_run_execute
from operations.sandbox import sandbox_authorize
from packages.models import Package
from telegram.sandbox.loader import world_load
from telegram.sandbox.world import World

READER = "+15550000001"
READER_B = "+15550000002"
WRITER = "+15550000009"
SOURCE = 1001
DESTINATION = 9000


# Two packages to search: a zip with folders and a top-level file, a 7z set of three volumes.
DRAGON_AND_CASTLE = [
    {
        "id": 11,
        "document": {
            "name": "dragon.zip",
            "archive": [
                {"path": "dragon/body.stl", "size": 2000},
                {"path": "dragon/wings/left.stl", "size": 1500},
                {"path": "dragon/wings/right.stl", "size": 1500},
                {"path": "README.txt", "size": 100},
            ],
        },
    },
    {
        "id": 20,
        "document": {
            "name": "castle.7z",
            "archive": [{"path": "castle/tower.stl", "size": 300_000}, {"path": "castle/gate.stl", "size": 1000}],
            "volume_size": 131_072,
        },
    },
]


def world(*, messages, more_chats=(), accounts=None, faults=(), limits=None, forum=False, topics=None):
    """A source channel with `messages`, a destination written by its own account."""
    accounts = accounts or [
        {"phone": READER, "first_name": "Reader A", "code": "12345"},
        {"phone": WRITER, "first_name": "Writer", "code": "12345"},
    ]
    phones = [account["phone"] for account in accounts]
    readers = [phone for phone in phones if phone != WRITER]
    source = {
        "id": SOURCE,
        "title": "Models A",
        "type": "channel",
        "forum": forum,
        "role": "source",
        "members": readers,
        "messages": messages,
    }
    if topics is not None:
        source["topics"] = topics
    data = {
        "accounts": accounts,
        "chats": [
            source,
            {
                "id": DESTINATION,
                "title": "Archive",
                "type": "channel",
                "role": "destination",
                "members": [WRITER],
                "admins": [WRITER],
                "messages": [],
            },
            *more_chats,
        ],
        "faults": list(faults),
    }
    if limits:
        data["limits"] = limits
    return data


def world_authorize_load(data: dict) -> World:
    """Load a world into SANDBOX_PATH, log its accounts in and apply the chat roles: `sandbox_load --authorize`."""
    world_load(settings.SANDBOX_PATH, data)
    sandbox_authorize()
    return World(settings.SANDBOX_PATH)


def run_cycle(phone: str = READER) -> IngestionRun:
    account = TelegramAccount.objects.get(phone=phone)
    run = IngestionRun.objects.create(account=account, trigger="command")
    ingestion_run_execute(run_id=run.pk)
    run.refresh_from_db()
    return run


@contextmanager
def held_elsewhere(namespace: str, name: str):
    """Another process's hold on an advisory lock or a session lease, as a second worker would have it: a
    connection of its own. Let go explicitly at the end: a closed connection's locks go only a moment later."""
    key = lock_key(namespace, name)
    connection = psycopg.connect(**connection_params(), autocommit=True)
    try:
        connection.execute("SELECT pg_advisory_lock(%s)", [key])
        yield
    finally:
        connection.execute("SELECT pg_advisory_unlock(%s)", [key])
        connection.close()


def dump(chat_id: int) -> dict:
    out = io.StringIO()
    call_command("sandbox_dump", str(chat_id), "--json", stdout=out)
    return json.loads(out.getvalue())


def documents(chat_id: int) -> list[dict]:
    """The messages of a sandbox chat that carry a document, oldest first (the `sandbox_dump` format)."""
    return [message for message in dump(chat_id)["messages"] if message["document"]]


def uploads() -> list[dict]:
    return documents(DESTINATION)


ARCHIVES = [
    {"id": 10, "text": "hello"},
    {"id": 11, "document": {"name": "dragon.zip", "archive": [{"path": "dragon/body.stl", "size": 2000}]}},
    {"id": 12, "document": {"name": "noise.bin", "size": 5000, "seed": 7}},
    {
        "id": 20,
        "document": {
            "name": "big.7z",
            "archive": [{"path": "a.stl", "size": 300_000}, {"path": "b/c.stl", "size": 1000}],
            "volume_size": 131_072,
        },
    },
    {"id": 30, "document": {"name": "bust.stl", "size": 4000, "seed": 3}},
]


def wait_until_over(run_ids, timeout=180):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (
            not IngestionRun.objects.filter(pk__in=run_ids)
            .exclude(status__in=[RunStatus.SUCCESS, RunStatus.PARTIAL, RunStatus.FAILED])
            .exists()
        ):
            return
        time.sleep(0.3)
    raise AssertionError(f"runs still open: {list(IngestionRun.objects.filter(pk__in=run_ids).values('pk', 'status'))}")


def uploaded_names() -> list[str]:
    return [message["document"]["name"] for message in uploads()]


def catalog_rebuild() -> str:
    """Run `catalog_rebuild`; what it printed."""
    out = io.StringIO()
    call_command("catalog_rebuild", stdout=out)
    return out.getvalue()


def package_listing(package: Package) -> tuple:
    """What a package's listing says: its status, error, count, fingerprint and files."""
    files = sorted(package.files.values_list("path", "size", "compressed_size", "crc32", "encrypted"))
    return package.metadata_status, package.metadata_error, package.file_count, package.listing_fingerprint, files
