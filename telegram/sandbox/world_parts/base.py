"""The world's database: its schema and limits, opening it, transactions, and the errors of the sandbox.

`Store` is the part of `World` every other part stands on: `conn`, `path`, `transaction()`, `meta()`.
"""

import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from telegram.sandbox import bot_tables

DB_NAME = "world.sqlite3"
BLOBS_DIR = "blobs"
BASE_DATE = datetime(2024, 1, 1, tzinfo=UTC)  # a world message is dated BASE_DATE + its id in seconds
DOCUMENT_ID_BASE = 5_000_000_000
DC_ADDRESSES = {1: "149.154.175.53", 2: "149.154.167.51", 3: "149.154.175.100", 4: "149.154.167.91", 5: "91.108.56.130"}
DC_PORT = 443
READ_CHUNK = 1024 * 1024

SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE accounts (
        phone TEXT PRIMARY KEY, user_id INTEGER NOT NULL, first_name TEXT NOT NULL, last_name TEXT NOT NULL,
        username TEXT NOT NULL, premium INTEGER NOT NULL, code TEXT NOT NULL, password TEXT,
        bandwidth_bytes_per_s INTEGER, dc_id INTEGER NOT NULL, banned INTEGER NOT NULL, login TEXT NOT NULL,
        flood_above_per_minute INTEGER, link_free_at REAL NOT NULL DEFAULT 0)""",
    # A session is an MTProto authorization key (by its id), bound to an account once logged in.
    """CREATE TABLE auth_keys (
        key_id TEXT PRIMARY KEY, dc_id INTEGER NOT NULL, phone TEXT, state TEXT NOT NULL,
        phone_code_hash TEXT, code_phone TEXT, srp_id INTEGER, srp_b TEXT)""",
    """CREATE TABLE connections (
        id INTEGER PRIMARY KEY, key_id TEXT NOT NULL, phone TEXT NOT NULL, pid INTEGER NOT NULL,
        pid_started TEXT NOT NULL)""",
    """CREATE TABLE session_stats (
        phone TEXT PRIMARY KEY, duplicated INTEGER NOT NULL DEFAULT 0, max_processes INTEGER NOT NULL DEFAULT 0)""",
    "CREATE TABLE sends (phone TEXT NOT NULL, at REAL NOT NULL)",
    "CREATE TABLE flood_waits (phone TEXT PRIMARY KEY, count INTEGER NOT NULL)",
    """CREATE TABLE chats (
        id INTEGER PRIMARY KEY, title TEXT NOT NULL, type TEXT NOT NULL, forum INTEGER NOT NULL,
        slow_mode_seconds INTEGER NOT NULL, members_can_post INTEGER NOT NULL, role TEXT,
        username TEXT NOT NULL DEFAULT '', migrated_to INTEGER, deactivated INTEGER NOT NULL DEFAULT 0,
        other_members INTEGER NOT NULL DEFAULT 0, join_request INTEGER NOT NULL DEFAULT 0)""",
    # Invite links (t.me/+HASH): `state` valid, expired or revoked; request_needed: admins approve each join.
    """CREATE TABLE invites (
        hash TEXT PRIMARY KEY, chat_id INTEGER NOT NULL, state TEXT NOT NULL, request_needed INTEGER NOT NULL)""",
    "CREATE TABLE join_requests (chat_id INTEGER NOT NULL, phone TEXT NOT NULL, PRIMARY KEY (chat_id, phone))",
    """CREATE TABLE chat_members (
        chat_id INTEGER NOT NULL, phone TEXT NOT NULL, admin INTEGER NOT NULL, PRIMARY KEY (chat_id, phone))""",
    """CREATE TABLE topics (
        chat_id INTEGER NOT NULL, id INTEGER NOT NULL, title TEXT NOT NULL, closed INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (chat_id, id))""",
    # A document is a range of a source: a whole blob, one volume of it, or a seeded range.
    """CREATE TABLE documents (
        id INTEGER PRIMARY KEY, name TEXT NOT NULL, size INTEGER NOT NULL, mime_type TEXT NOT NULL, sha256 TEXT,
        source TEXT NOT NULL, source_key TEXT NOT NULL, source_size INTEGER NOT NULL, start INTEGER NOT NULL)""",
    """CREATE TABLE messages (
        chat_id INTEGER NOT NULL, id INTEGER NOT NULL, topic INTEGER, sender TEXT, date REAL NOT NULL,
        text TEXT NOT NULL, random_id INTEGER, kind TEXT, document_id INTEGER, deleted INTEGER NOT NULL DEFAULT 0,
        grouped_id INTEGER, reply_to INTEGER, entities TEXT, silent INTEGER NOT NULL DEFAULT 0,
        no_webpage INTEGER NOT NULL DEFAULT 0, pinned INTEGER NOT NULL DEFAULT 0, edit_date REAL,
        PRIMARY KEY (chat_id, id))""",
    "CREATE INDEX messages_random_id ON messages (chat_id, random_id)",
    # Messages a world file posts later (`arrives_after_seconds`), in the order they are due.
    """CREATE TABLE scheduled (
        seq INTEGER PRIMARY KEY, chat_id INTEGER NOT NULL, due REAL NOT NULL, topic INTEGER, text TEXT NOT NULL,
        kind TEXT, document_id INTEGER)""",
    """CREATE TABLE faults (
        id INTEGER PRIMARY KEY, op TEXT NOT NULL, error TEXT NOT NULL, account TEXT, chat INTEGER, message INTEGER,
        seconds INTEGER NOT NULL, times INTEGER NOT NULL, after INTEGER NOT NULL, seen INTEGER NOT NULL DEFAULT 0)""",
    # `connecting`: requests a client makes while connecting (InitConnection, GetUsers, GetState, ...)
    """CREATE TABLE calls (
        phone TEXT NOT NULL, method TEXT NOT NULL, connecting INTEGER NOT NULL, count INTEGER NOT NULL,
        PRIMARY KEY (phone, method, connecting))""",
    *bot_tables.SCHEMA,
)
TABLES = (
    "meta",
    "accounts",
    "auth_keys",
    "connections",
    "session_stats",
    "sends",
    "flood_waits",
    "chats",
    "chat_members",
    "invites",
    "join_requests",
    "topics",
    "documents",
    "messages",
    "scheduled",
    "faults",
    "calls",
    *bot_tables.TABLES,
)
ACCOUNT_FIELDS = (
    "first_name",
    "last_name",
    "username",
    "premium",
    "code",
    "password",
    "bandwidth_bytes_per_s",
    "dc_id",
    "banned",
    "login",
    "flood_above_per_minute",
)
LOGIN_ANSWERS = ("code", "payment_required", "email_setup_required")
DC_IDS = tuple(DC_ADDRESSES)
DEFAULT_DC_ID = 2  # where Telethon connects first
CHANNELS_MAX = 500  # channels and supergroups an account may be in (twice as many with Premium)
CREATED_CHAT_ID_BASE = 1_800_000_000  # channels made through the sandbox get ids from here on
SAVED_MESSAGES_ROLE = "saved_messages"  # the role of an account's Saved Messages chat
# Telegram's quirks, each off unless the world file turns it on (under "quirks", or "limits" for the two limits).
QUIRKS = {
    "short_search_pages": False,  # search answers fewer messages than asked for, mid-history too
    "search_min_id_near_top": False,  # min_id/max_id near the top of history make search answer nothing
    "auth_key_duplicated": False,  # one session used from two OS processes at once is revoked
    "random_id_memory_seconds": 0,  # 0: a random_id is remembered for ever
    "file_reference_ttl_seconds": 3600,
    # the window an account's `flood_above_per_minute` counts sends in; tests and benchmarks shorten it to scale time
    "flood_window_seconds": 60,
}


class WorldError(ValueError):
    """The world file is invalid, or a request names what the world does not have."""


class WorldMissing(WorldError):
    """No world has been loaded at this path."""


class SlowModeWait(Exception):
    """A sender posts again sooner than the chat's slow mode allows."""

    def __init__(self, seconds: int):
        super().__init__(f"slow mode: wait {seconds} s")
        self.seconds = seconds


def iso_date(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def connect(db: Path, *, create: bool = False) -> sqlite3.Connection:
    # autocommit (isolation_level=None): transactions are the explicit BEGIN IMMEDIATE of World.transaction()
    conn = sqlite3.connect(
        f"{db.resolve().as_uri()}?mode={'rwc' if create else 'rw'}",
        uri=True,
        isolation_level=None,
        timeout=30,
        check_same_thread=False,
    )
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 30000")
    # The world is in WAL mode (sandbox_load): a commit then survives a killed process without its own fsync,
    # which made every request of every client wait for the disk.
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn


@contextmanager
def immediate(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class Store:
    """The world's database: one SQLite connection; safe to use from several processes at once."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        db = self.path / DB_NAME
        if not db.exists():
            raise WorldMissing(
                f"No sandbox world at {db}; load one with `make manage ARGS='sandbox_load WORLD.json'` "
                "(`make run` loads the demo world)."
            )
        self.conn = connect(db)

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with immediate(self.conn) as conn:
            yield conn

    def now(self) -> float:
        """Now, for dates of posts, slow mode and limits; `World` reads `telegram.sandbox.world.clock`."""
        raise NotImplementedError

    def _one(self, sql: str, params=()) -> sqlite3.Row | None:
        return self.conn.execute(sql, params).fetchone()

    def meta(self, key: str):
        row = self._one("SELECT value FROM meta WHERE key = ?", (key,))
        return None if row is None else json.loads(row["value"])
