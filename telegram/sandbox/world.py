"""The sandbox world: one SQLite database shared by every process of a stack.

`world_load()` (loader.py) replaces it from a world file (DESIGN.md, "Sandbox world file (JSON, v1)");
`World` reads and changes it. Writes take `BEGIN IMMEDIATE` on a WAL database, so web,
workers and tests can use one world at once. Built archives and uploaded files are
blobs named by their SHA-256 under `blobs/`; seeded documents are never stored.

`World` is the one facade every fake Telegram call uses; its parts, one job each, live in `world_parts/`:
the database (`base`), documents and blobs, chats and membership, messages, accounts and sessions, and
what is counted and limited (`accounting`). The names below are re-exported so callers import them from here.
"""

import time

from telegram.sandbox.world_parts.accounting import Accounting
from telegram.sandbox.world_parts.base import (
    ACCOUNT_FIELDS,
    BASE_DATE,
    BLOBS_DIR,
    CHANNELS_MAX,
    CREATED_CHAT_ID_BASE,
    DB_NAME,
    DC_ADDRESSES,
    DC_IDS,
    DC_PORT,
    DEFAULT_DC_ID,
    DOCUMENT_ID_BASE,
    LOGIN_ANSWERS,
    QUIRKS,
    READ_CHUNK,
    SAVED_MESSAGES_ROLE,
    SCHEMA,
    TABLES,
    SlowModeWait,
    Store,
    WorldError,
    WorldMissing,
    connect,
    immediate,
    iso_date,
)
from telegram.sandbox.world_parts.chats import Chats, chat_access_hash
from telegram.sandbox.world_parts.documents import (
    BlobWriter,
    Documents,
    document_insert,
    document_parts,
    document_spec,
    photo_row,
)
from telegram.sandbox.world_parts.messages import Messages
from telegram.sandbox.world_parts.sessions import Sessions

__all__ = [
    "ACCOUNT_FIELDS",
    "BASE_DATE",
    "BLOBS_DIR",
    "CHANNELS_MAX",
    "CREATED_CHAT_ID_BASE",
    "DB_NAME",
    "DC_ADDRESSES",
    "DC_IDS",
    "DC_PORT",
    "DEFAULT_DC_ID",
    "DOCUMENT_ID_BASE",
    "LOGIN_ANSWERS",
    "QUIRKS",
    "READ_CHUNK",
    "SAVED_MESSAGES_ROLE",
    "SCHEMA",
    "TABLES",
    "BlobWriter",
    "SlowModeWait",
    "World",
    "WorldError",
    "WorldMissing",
    "chat_access_hash",
    "clock",
    "connect",
    "document_insert",
    "document_parts",
    "document_spec",
    "immediate",
    "iso_date",
    "photo_row",
]


def clock() -> float:
    """Now, for dates of new posts, slow mode and expiry; tests replace it (`telegram.sandbox.world.clock`)."""
    return time.time()


class World(Documents, Chats, Messages, Sessions, Accounting, Store):
    """A loaded sandbox world. One SQLite connection; safe to use from several processes at once."""

    def now(self) -> float:
        """The world's clock, read through this module so that replacing `clock` reaches every part."""
        return clock()
