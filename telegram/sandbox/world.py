"""The sandbox world: one SQLite database shared by every process of a stack.

`world_load()` (loader.py) replaces it from a world file (DESIGN.md, "Sandbox world file (JSON, v1)");
`World` reads and changes it. Writes take `BEGIN IMMEDIATE` on a WAL database, so web,
workers and tests can use one world at once. Built archives and uploaded files are
blobs named by their SHA-256 under `blobs/`; seeded documents are never stored.

Why this size: World is the one store behind every fake Telegram call (reads, writes, limits, sessions).
"""

import hashlib
import json
import math
import os
import secrets
import sqlite3
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from telethon.crypto import AuthKey
from telethon.sessions import StringSession

from telegram.records import GENERAL_TOPIC_ID, GROUP, USER
from telegram.sandbox import bot_tables, content
from telegram.sandbox.faults import FaultError, fault_parse

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
        no_webpage INTEGER NOT NULL DEFAULT 0, pinned INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (chat_id, id))""",
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


def clock() -> float:
    """Now, for dates of new posts, slow mode and expiry; tests replace it."""
    return time.time()


def chat_access_hash(*, phone: str, chat_id: int, type: str) -> int:
    """Deterministic per (account, chat), as Telegram's access hashes are per account (tl.access_hash).

    Basic groups have none in Telegram (they are addressed by id alone): 0. A person's is a user's hash.
    """
    if type == GROUP:
        return 0
    kind = "user" if type == USER else "chat"
    return int.from_bytes(hashlib.sha256(f"{kind}:{phone}:{chat_id}".encode()).digest()[:8], "big", signed=True)


def _process_started(pid: int) -> str:
    """When a process started (Linux: its start time in ticks), so a reused pid is not taken for it."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def _process_alive(pid: int, started: str) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return _process_started(pid) == started


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


# -- building documents -------------------------------------------------------------------------------------------


def _blob_path(root: Path, sha256: str) -> Path:
    return root / BLOBS_DIR / sha256


class BlobWriter:
    """Bytes written inside the block become a content-addressed blob when it ends without error."""

    def __init__(self, root: Path):
        self.root = root
        self.sha256 = ""
        self.size = 0

    def __enter__(self) -> "BlobWriter":
        blobs = self.root / BLOBS_DIR
        blobs.mkdir(parents=True, exist_ok=True)
        self._digest = hashlib.sha256()
        self._file = tempfile.NamedTemporaryFile(dir=blobs, prefix=".upload-", delete=False)
        return self

    def write(self, chunk: bytes) -> None:
        self._digest.update(chunk)
        self.size += len(chunk)
        self._file.write(chunk)

    def __exit__(self, exc_type, exc, traceback) -> None:
        self._file.close()
        if exc_type is not None:
            os.unlink(self._file.name)
            return
        self.sha256 = self._digest.hexdigest()
        os.replace(self._file.name, _blob_path(self.root, self.sha256))  # atomic: readers never see half a blob


def _archive_blob(root: Path, name: str, entries: list[dict]) -> tuple[str, int]:
    (root / BLOBS_DIR).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root / BLOBS_DIR, prefix=".build-") as build:
        archive = Path(build) / "archive"
        content.archive_write(path=archive, name=name, entries=entries)
        with BlobWriter(root) as blob, open(archive, "rb") as handle:
            while chunk := handle.read(READ_CHUNK):
                blob.write(chunk)
        return blob.sha256, blob.size


def _file_blob(root: Path, path: Path) -> tuple[str, int]:
    """Real bytes from a file (an archive made by zip or 7z, say) as a blob."""
    with BlobWriter(root) as blob, open(path, "rb") as handle:
        while chunk := handle.read(READ_CHUNK):
            blob.write(chunk)
    return blob.sha256, blob.size


def document_spec(spec, where: str) -> dict:
    """A world-file document, checked: {"name", "archive"}, {"name", "size", "seed"} or {"name", "file"},
    with an optional "volume_size"."""
    if not isinstance(spec, dict) or not isinstance(spec.get("name"), str) or not spec["name"]:
        raise WorldError(f"{where}: a document needs a non-empty 'name'")
    name = spec["name"]
    volume_size = spec.get("volume_size")
    if volume_size is not None and (not isinstance(volume_size, int) or volume_size <= 0):
        raise WorldError(f"{where}: 'volume_size' must be a positive integer")
    if "file" in spec:
        path = Path(str(spec["file"]))
        if not path.is_file():
            raise WorldError(f"{where}: document file {path} does not exist")
        return {"name": name, "file": str(path), "volume_size": volume_size}
    if "archive" in spec:
        entries = spec["archive"]
        if content.archive_kind(name) is None:
            raise WorldError(f"{where}: archive '{name}' must end in .zip or .7z (the sandbox cannot build others)")
        if not isinstance(entries, list) or not entries:
            raise WorldError(f"{where}: 'archive' must be a non-empty list of {{'path', 'size'}} entries")
        checked = []
        for entry in entries:
            if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or not entry["path"]:
                raise WorldError(f"{where}: every archive entry needs a 'path'")
            if not entry.get("picture") and (not isinstance(entry.get("size"), int) or entry["size"] < 0):
                raise WorldError(f"{where}: archive entry '{entry['path']}' needs a non-negative integer 'size'")
            checked.append({key: entry[key] for key in ("path", "size", "seed", "picture") if key in entry})
        return {"name": name, "archive": checked, "volume_size": volume_size}
    size = spec.get("size")
    if not isinstance(size, int) or size < 0:
        raise WorldError(f"{where}: document '{name}' needs 'archive' entries or a non-negative integer 'size'")
    return {"name": name, "size": size, "seed": str(spec.get("seed", name)), "volume_size": volume_size}


def document_parts(root: Path, spec: dict) -> list[dict]:
    """Document rows (without id) for a checked spec: one, or one per volume."""
    if "archive" in spec:
        sha256, total = _archive_blob(root, spec["name"], spec["archive"])
        source, key = "blob", sha256
    elif "file" in spec:
        sha256, total = _file_blob(root, Path(spec["file"]))
        source, key = "blob", sha256
    else:
        source, key, total, sha256 = "seed", spec["seed"], spec["size"], None
    if not spec["volume_size"]:
        return [_document_row(spec["name"], total, sha256, source, key, total, 0)]
    return [
        _document_row(content.volume_name(spec["name"], index), length, None, source, key, total, start)
        for index, (start, length) in enumerate(content.volume_ranges(size=total, volume_size=spec["volume_size"]), 1)
    ]


def _document_row(name, size, sha256, source, key, source_size, start) -> dict:
    return {
        "name": name,
        "size": size,
        "mime_type": content.mime_type(name),
        "sha256": sha256,
        "source": source,
        "source_key": key,
        "source_size": source_size,
        "start": start,
    }


def photo_row(root: Path, spec, where: str, default_seed: str) -> dict:
    """A photo holds a real JPEG picture made from its seed (so previews can be made of it)."""
    if not isinstance(spec, dict):
        raise WorldError(f"{where}: 'photo' must be an object")
    with BlobWriter(root) as blob:
        blob.write(content.picture(seed=str(spec.get("seed", default_seed))))
    return _document_row("photo.jpg", blob.size, blob.sha256, "blob", blob.sha256, blob.size, 0)


def document_insert(conn: sqlite3.Connection, row: dict) -> int:
    document_id = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'next_document_id'").fetchone()[0])
    conn.execute(
        "UPDATE meta SET value = ? WHERE key = 'next_document_id'",
        (json.dumps(document_id + 1),),
    )
    conn.execute(
        "INSERT INTO documents VALUES (:id, :name, :size, :mime_type, :sha256, :source, :source_key, :source_size,"
        " :start)",
        {**row, "id": document_id},
    )
    return document_id


# -- the world ----------------------------------------------------------------------------------------------------


class World:
    """A loaded sandbox world. One SQLite connection; safe to use from several processes at once."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        db = self.path / DB_NAME
        if not db.exists():
            raise WorldMissing(f"No sandbox world at {db}; load one with `manage.py sandbox_load WORLD.json`.")
        self.conn = connect(db)

    def close(self) -> None:
        self.conn.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        with immediate(self.conn) as conn:
            yield conn

    def _one(self, sql: str, params=()) -> sqlite3.Row | None:
        return self.conn.execute(sql, params).fetchone()

    # reading

    def meta(self, key: str):
        row = self._one("SELECT value FROM meta WHERE key = ?", (key,))
        return None if row is None else json.loads(row["value"])

    def account(self, phone: str) -> dict | None:
        row = self._one("SELECT * FROM accounts WHERE phone = ?", (phone,))
        return None if row is None else dict(row)

    def accounts(self) -> list[dict]:
        return [dict(row) for row in self.conn.execute("SELECT * FROM accounts ORDER BY phone")]

    def upload_max_bytes(self, phone: str) -> int:
        account = self.account(phone)
        return self.meta("premium_upload_max_bytes" if account and account["premium"] else "upload_max_bytes")

    def chat(self, chat_id: int) -> dict | None:
        row = self._one("SELECT * FROM chats WHERE id = ?", (chat_id,))
        return None if row is None else dict(row)

    def chats(self) -> list[dict]:
        """Every chat with its members and admins (and `role`, for the features that read it)."""
        chats = [dict(row) for row in self.conn.execute("SELECT * FROM chats ORDER BY id")]
        for chat in chats:
            rows = self.conn.execute(
                "SELECT phone, admin FROM chat_members WHERE chat_id = ? ORDER BY phone", (chat["id"],)
            )
            members = [(row["phone"], row["admin"]) for row in rows]
            chat["members"] = [phone for phone, admin in members if not admin]
            chat["admins"] = [phone for phone, admin in members if admin]
        return chats

    def account_chats(self, phone: str) -> list[dict]:
        """Chats `phone` is in, each with `admin` (bool)."""
        rows = self.conn.execute(
            "SELECT chats.*, chat_members.admin FROM chats JOIN chat_members ON chat_members.chat_id = chats.id"
            " WHERE chat_members.phone = ? ORDER BY chats.id",
            (phone,),
        )
        return [dict(row) for row in rows]

    def membership(self, chat_id: int, phone: str) -> str | None:
        """'admin', 'member' or None."""
        row = self._one("SELECT admin FROM chat_members WHERE chat_id = ? AND phone = ?", (chat_id, phone))
        return None if row is None else ("admin" if row["admin"] else "member")

    def chat_by_username(self, username: str) -> dict | None:
        """The chat (or person, or account) holding a public @username, case-insensitively as Telegram's."""
        row = self._one("SELECT * FROM chats WHERE username != '' AND lower(username) = lower(?)", (username,))
        return None if row is None else dict(row)

    def members_count(self, chat_id: int) -> int:
        """What Telegram counts: the world's accounts in the chat and the other people the world file says."""
        row = self._one(
            "SELECT other_members + (SELECT COUNT(*) FROM chat_members WHERE chat_id = ?) AS n FROM chats WHERE id = ?",
            (chat_id, chat_id),
        )
        return 0 if row is None else row["n"]

    def invite(self, invite_hash: str) -> dict | None:
        row = self._one("SELECT * FROM invites WHERE hash = ?", (invite_hash,))
        return None if row is None else dict(row)

    def channels_joined(self, phone: str) -> int:
        """Channels and supergroups `phone` is in (Telegram's CHANNELS_TOO_MUCH counts these)."""
        return self._one(
            "SELECT COUNT(*) AS n FROM chat_members JOIN chats ON chats.id = chat_members.chat_id"
            " WHERE chat_members.phone = ? AND chats.type IN ('channel', 'supergroup')",
            (phone,),
        )["n"]

    def join_requests(self, chat_id: int) -> list[str]:
        """Accounts waiting for the chat's admins to let them in."""
        rows = self.conn.execute("SELECT phone FROM join_requests WHERE chat_id = ? ORDER BY phone", (chat_id,))
        return [row["phone"] for row in rows]

    def topics(self, chat_id: int, *, after: int = 0, limit: int | None = 100) -> list[dict]:
        """Topics after id `after`, ascending, each with `top_message_id` (its last message, 0 when empty)."""
        rows = self.conn.execute(
            "SELECT topics.id, topics.title, topics.closed, COALESCE(MAX(messages.id), 0) AS top_message_id"
            " FROM topics LEFT JOIN messages ON messages.chat_id = topics.chat_id AND messages.topic = topics.id"
            " AND NOT messages.deleted WHERE topics.chat_id = ? AND topics.id > ? GROUP BY topics.id"
            " ORDER BY topics.id LIMIT ?",
            (chat_id, after, -1 if limit is None else limit),
        )
        return [dict(row) for row in rows]

    def topic_create(self, chat_id: int, topic_id: int, title: str) -> None:
        """Someone opens a new topic in a forum."""
        chat = self.chat(chat_id)
        if chat is None or not chat["forum"]:
            raise WorldError(f"Chat {chat_id} is not a forum of this world.")
        with self.transaction() as conn:
            conn.execute("INSERT INTO topics VALUES (?, ?, ?, 0)", (chat_id, topic_id, title))

    def topic_exists(self, chat_id: int, topic_id: int) -> bool:
        return self._one("SELECT 1 FROM topics WHERE chat_id = ? AND id = ?", (chat_id, topic_id)) is not None

    def last_message_id(self, chat_id: int) -> int:
        row = self._one("SELECT MAX(id) AS id FROM messages WHERE chat_id = ? AND NOT deleted", (chat_id,))
        return row["id"] or 0

    def message(self, chat_id: int, message_id: int) -> dict | None:
        """A message that still exists, with its document's columns as `document_*` (None without one)."""
        rows = self._messages("messages.chat_id = ? AND messages.id = ?", (chat_id, message_id))
        return rows[0] if rows else None

    def search_messages(
        self, chat_id: int, *, kind: str | None = None, topic: int | None = None, below: int | None = None
    ) -> list[dict]:
        """Messages newest first, of one kind ('document', 'photo') and topic, with ids below `below`."""
        where, params = "messages.chat_id = ?", [chat_id]
        for clause, value in (("messages.kind = ?", kind), ("messages.topic = ?", topic), ("messages.id < ?", below)):
            if value is not None:
                where += f" AND {clause}"
                params.append(value)
        return self._messages(f"{where} ORDER BY messages.id DESC", params)

    def _messages(self, where: str, params) -> list[dict]:
        rows = self.conn.execute(
            "SELECT messages.*, documents.name AS document_name, documents.size AS document_size,"
            " documents.mime_type AS document_mime_type FROM messages"
            f" LEFT JOIN documents ON documents.id = messages.document_id WHERE NOT messages.deleted AND {where}",
            params,
        )
        return [dict(row) for row in rows]

    def document(self, document_id: int) -> dict | None:
        row = self._one("SELECT * FROM documents WHERE id = ?", (document_id,))
        return None if row is None else dict(row)

    def document_read(self, document: dict, *, offset: int = 0, length: int | None = None) -> bytes:
        """Bytes of a document from `offset` (all of the rest when length is None)."""
        length = document["size"] - offset if length is None else min(length, document["size"] - offset)
        if length <= 0:
            return b""
        if document["source"] == "seed":
            return content.seeded_read(
                seed=document["source_key"],
                size=document["source_size"],
                offset=document["start"] + offset,
                length=length,
            )
        with open(_blob_path(self.path, document["source_key"]), "rb") as blob:
            blob.seek(document["start"] + offset)
            return blob.read(length)

    def document_sha256(self, document: dict) -> str:
        """Computed on first use and kept: a seeded document can be gigabytes that nobody hashes."""
        if document["sha256"]:
            return document["sha256"]
        digest = hashlib.sha256()
        for offset in range(0, document["size"], READ_CHUNK):
            digest.update(self.document_read(document, offset=offset, length=READ_CHUNK))
        sha256 = digest.hexdigest()
        with self.transaction() as conn:
            conn.execute("UPDATE documents SET sha256 = ? WHERE id = ?", (sha256, document["id"]))
        return sha256

    def message_bytes(self, chat_id: int, message_id: int) -> bytes:
        """The whole file of a message (a test helper: keep such files small)."""
        message = self.message(chat_id, message_id)
        if message is None or message["document_id"] is None:
            raise WorldError(f"chat {chat_id} has no message {message_id} with a file")
        return self.document_read(self.document(message["document_id"]))

    def chat_dump(self, chat_id: int) -> dict:
        """Everything in a chat, including what the project posted (the `sandbox_dump` format)."""
        chat = self.chat(chat_id)
        owner = self._one("SELECT phone FROM accounts WHERE user_id = ?", (chat_id,))
        if chat is None and owner is not None:  # an account's Saved Messages, empty so far
            chat = self.saved_messages(owner["phone"])
        if chat is None:
            raise WorldError(f"The sandbox world has no chat {chat_id}.")
        self.scheduled_deliver()
        messages = []
        for row in self._messages("messages.chat_id = ? ORDER BY messages.id", (chat_id,)):
            media = None
            if row["document_id"] is not None:
                document = self.document(row["document_id"])
                media = {"name": document["name"], "size": document["size"], "sha256": self.document_sha256(document)}
            messages.append(
                {
                    "id": row["id"],
                    "topic": row["topic"],
                    "sender": row["sender"],
                    "date": iso_date(row["date"]),
                    "text": row["text"],
                    "entities": json.loads(row["entities"]) if row["entities"] else [],
                    "grouped_id": row["grouped_id"],
                    "silent": bool(row["silent"]),
                    "link_preview": not row["no_webpage"],
                    "pinned": bool(row["pinned"]),
                    "random_id": row["random_id"],
                    "document": media if row["kind"] == "document" else None,
                    "photo": media if row["kind"] == "photo" else None,
                }
            )
        deleted = self.conn.execute(
            "SELECT id FROM messages WHERE chat_id = ? AND deleted ORDER BY id", (chat_id,)
        ).fetchall()
        return {
            "chat": {"id": chat["id"], "title": chat["title"], "type": chat["type"], "forum": bool(chat["forum"])},
            "messages": messages,
            "deleted": [row["id"] for row in deleted],
        }

    def stats(self) -> dict:
        """The `sandbox_stats --json` shape: requests per account and method (those made while connecting
        also apart), sessions used from several processes at once, and FloodWaits answered."""
        calls: dict[str, dict[str, int]] = {}
        connecting: dict[str, dict[str, int]] = {}
        for row in self.conn.execute("SELECT phone, method, connecting, count FROM calls ORDER BY phone, method"):
            methods = calls.setdefault(row["phone"], {})
            methods[row["method"]] = methods.get(row["method"], 0) + row["count"]
            if row["connecting"]:
                connecting.setdefault(row["phone"], {})[row["method"]] = row["count"]
        sessions = {
            row["phone"]: {"duplicated": row["duplicated"], "max_processes": row["max_processes"]}
            for row in self.conn.execute("SELECT * FROM session_stats ORDER BY phone")
        }
        flood_waits = {row["phone"]: row["count"] for row in self.conn.execute("SELECT * FROM flood_waits")}
        return {"calls": calls, "connecting": connecting, "sessions": sessions, "flood_waits": flood_waits}

    def stats_reset(self) -> None:
        with self.transaction() as conn:
            for table in ("calls", "session_stats", "flood_waits"):
                conn.execute(f"DELETE FROM {table}")

    # requests

    def request(
        self,
        *,
        phone: str,
        method: str,
        op: str | None,
        connecting: bool = False,
        chats: Iterable[int] = (),
        messages: Iterable[int] = (),
    ) -> dict | None:
        """Count one API request; returns the fault that fails it, if one matches (op None: never faulted)."""
        chats, messages = set(chats), set(messages)
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO calls VALUES (?, ?, ?, 1) ON CONFLICT (phone, method, connecting)"
                " DO UPDATE SET count = count + 1",
                (phone, method, connecting),
            )
            faults = (
                conn.execute("SELECT * FROM faults WHERE op IN (?, 'any') ORDER BY id", (op,)).fetchall() if op else []
            )
            for fault in faults:
                if (
                    (fault["op"] == "any" and connecting)
                    or (fault["account"] is not None and fault["account"] != phone)
                    or (fault["chat"] is not None and fault["chat"] not in chats)
                    or (fault["message"] is not None and fault["message"] not in messages)
                ):
                    continue
                seen = fault["seen"] + 1
                conn.execute("UPDATE faults SET seen = ? WHERE id = ?", (seen, fault["id"]))
                if fault["after"] < seen <= fault["after"] + fault["times"]:
                    return dict(fault)
        return None

    def flood_wait_count(self, phone: str) -> None:
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO flood_waits VALUES (?, 1) ON CONFLICT (phone) DO UPDATE SET count = count + 1", (phone,)
            )

    def send_allowance(self, phone: str, limit: int | None) -> int:
        """Record a send of `phone`; with a limit per 60 s (`flood_window_seconds`), the seconds to wait instead
        when it is reached."""
        window = self.meta("flood_window_seconds") or 60
        with self.transaction() as conn:
            now = clock()
            conn.execute("DELETE FROM sends WHERE phone = ? AND at <= ?", (phone, now - window))
            if limit:
                rows = conn.execute("SELECT at FROM sends WHERE phone = ? ORDER BY at", (phone,)).fetchall()
                if len(rows) >= limit:
                    return max(1, math.ceil(rows[len(rows) - limit]["at"] + window - now))
            conn.execute("INSERT INTO sends VALUES (?, ?)", (phone, now))
        return 0

    def bandwidth_wait(self, phone: str, size: int) -> float:
        """Seconds until `size` more bytes of `phone` have passed its bandwidth (shared by all its connections)."""
        with self.transaction() as conn:
            row = conn.execute(
                "SELECT bandwidth_bytes_per_s, link_free_at FROM accounts WHERE phone = ?", (phone,)
            ).fetchone()
            if row is None or not row["bandwidth_bytes_per_s"]:
                return 0.0
            now = clock()
            free_at = max(now, row["link_free_at"]) + size / row["bandwidth_bytes_per_s"]
            conn.execute("UPDATE accounts SET link_free_at = ? WHERE phone = ?", (free_at, phone))
        return free_at - now

    # sessions: MTProto authorization keys

    def key(self, key_id: str) -> dict | None:
        row = self._one("SELECT * FROM auth_keys WHERE key_id = ?", (key_id,))
        return None if row is None else dict(row)

    def key_open(self, key_id: str, dc_id: int) -> dict:
        """The key's row; a key never seen is new (as after a key exchange) and logged in as nobody."""
        with self.transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO auth_keys (key_id, dc_id, state) VALUES (?, ?, 'new')", (key_id, dc_id))
        return self.key(key_id)

    def key_update(self, key_id: str, **fields) -> None:
        with self.transaction() as conn:
            for name, value in fields.items():
                conn.execute(f"UPDATE auth_keys SET {name} = ? WHERE key_id = ?", (value, key_id))

    def session_issue(self, phone: str) -> str:
        """A logged-in Telethon StringSession for a world account, skipping the login steps (tests and tools)."""
        account = self.account(phone)
        if account is None:
            raise WorldError(f"{phone} is not an account of the sandbox world.")
        key = AuthKey(secrets.token_bytes(256))
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO auth_keys (key_id, dc_id, phone, state) VALUES (?, ?, ?, 'authorized')",
                (str(key.key_id), account["dc_id"], phone),
            )
        session = StringSession()
        session.set_dc(account["dc_id"], DC_ADDRESSES[account["dc_id"]], DC_PORT)
        session.auth_key = key
        return session.save()

    def sessions_revoke(self, phone: str) -> None:
        """Log `phone` out everywhere, as when its sessions are terminated from another device."""
        with self.transaction() as conn:
            conn.execute("UPDATE auth_keys SET state = 'revoked' WHERE phone = ?", (phone,))

    def connection_open(self, *, key_id: str, phone: str) -> tuple[int, bool]:
        """Register this process's connection with a key; returns (connection id, whether another live
        process is connected with the same key right now)."""
        pid = os.getpid()
        with self.transaction() as conn:
            for row in conn.execute("SELECT id, pid, pid_started FROM connections").fetchall():
                if not _process_alive(row["pid"], row["pid_started"]):
                    conn.execute("DELETE FROM connections WHERE id = ?", (row["id"],))
            cursor = conn.execute(
                "INSERT INTO connections (key_id, phone, pid, pid_started) VALUES (?, ?, ?, ?)",
                (key_id, phone, pid, _process_started(pid)),
            )
            others = conn.execute(
                "SELECT COUNT(*) FROM connections WHERE key_id = ? AND pid != ?", (key_id, pid)
            ).fetchone()[0]
            processes = conn.execute(
                "SELECT COUNT(DISTINCT pid) FROM connections WHERE phone = ?", (phone,)
            ).fetchone()[0]
            conn.execute(
                "INSERT INTO session_stats (phone, duplicated, max_processes) VALUES (?, ?, ?)"
                " ON CONFLICT (phone) DO UPDATE SET duplicated = duplicated + excluded.duplicated,"
                " max_processes = MAX(max_processes, excluded.max_processes)",
                (phone, 1 if others else 0, processes),
            )
        return cursor.lastrowid, bool(others)

    def connection_close(self, connection_id: int) -> None:
        with self.transaction() as conn:
            conn.execute("DELETE FROM connections WHERE id = ?", (connection_id,))

    def account_update(self, phone: str, **fields) -> None:
        """Change a world account (e.g. premium=True), as Telegram's side can change between logins."""
        unknown = set(fields) - set(ACCOUNT_FIELDS)
        if unknown or self.account(phone) is None:
            raise WorldError(f"Cannot update {sorted(unknown) or phone} of a sandbox account.")
        with self.transaction() as conn:
            for key, value in fields.items():
                conn.execute(f"UPDATE accounts SET {key} = ? WHERE phone = ?", (value, phone))

    def chat_migrate(self, group_id: int, supergroup_id: int) -> None:
        """A basic group upgraded to a supergroup (messages.migrateChat): the group is deactivated and names the
        supergroup (Chat.migrated_to); posting in it is answered CHAT_ID_INVALID from then on."""
        group, supergroup = self.chat(group_id), self.chat(supergroup_id)
        if group is None or group["type"] != "group":
            raise WorldError(f"Chat {group_id} is not a basic group of the sandbox.")
        if supergroup is None or supergroup["type"] != "supergroup":
            raise WorldError(f"Chat {supergroup_id} is not a supergroup of the sandbox.")
        with self.transaction() as conn:
            conn.execute("UPDATE chats SET migrated_to = ? WHERE id = ?", (supergroup_id, group_id))

    def chat_deactivate(self, group_id: int) -> None:
        """A basic group deleted without a successor: deactivated, and posting in it is answered CHAT_ID_INVALID."""
        group = self.chat(group_id)
        if group is None or group["type"] != "group":
            raise WorldError(f"Chat {group_id} is not a basic group of the sandbox.")
        with self.transaction() as conn:
            conn.execute("UPDATE chats SET deactivated = 1 WHERE id = ?", (group_id,))

    def fault_add(self, spec: dict) -> None:
        try:
            fault = fault_parse(spec)
        except FaultError as exc:
            raise WorldError(str(exc)) from None
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO faults (op, error, account, chat, message, seconds, times, after)"
                " VALUES (:op, :error, :account, :chat, :message, :seconds, :times, :after)",
                fault,
            )

    def blob_writer(self) -> BlobWriter:
        """Where uploaded bytes go: `with world.blob_writer() as blob: blob.write(...)`."""
        return BlobWriter(self.path)

    def document_create(self, *, name: str, sha256: str, size: int, mime_type: str = "") -> int:
        """A document holding a whole blob (an upload)."""
        row = _document_row(name, size, sha256, "blob", sha256, size, 0)
        with self.transaction() as conn:
            return document_insert(conn, row | ({"mime_type": mime_type} if mime_type else {}))

    def post(
        self,
        chat_id: int,
        *,
        sender: str | None,
        text: str = "",
        topic: int | None = None,
        kind: str | None = None,
        document_id: int | None = None,
        random_id: int | None = None,
        slow_mode_seconds: int = 0,
        entities: list[dict] | None = None,
        silent: bool = False,
        no_webpage: bool = False,
    ) -> tuple[int | None, float | None]:
        """Append a message with the chat's next id; returns (id, date).

        A random_id this chat still remembers (deleted messages included; for `random_id_memory_seconds`,
        or for ever) posts nothing and returns (None, None): Telegram's RANDOM_ID_DUPLICATE. With
        slow_mode_seconds, a sender's second post too soon raises SlowModeWait.
        """
        with self.transaction() as conn:
            now = clock()
            if random_id is not None and self._remembered(conn, chat_id, random_id, now):
                return None, None
            self._slow_mode_check(conn, chat_id, sender, slow_mode_seconds, now)
            message_id = self._next_id(conn, chat_id)
            conn.execute(
                "INSERT INTO messages (chat_id, id, topic, sender, date, text, random_id, kind, document_id, entities,"
                " silent, no_webpage) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    chat_id,
                    message_id,
                    topic,
                    sender,
                    now,
                    text,
                    random_id,
                    kind,
                    document_id,
                    json.dumps(entities) if entities else None,
                    int(silent),
                    int(no_webpage),
                ),
            )
        return message_id, now

    def album_post(
        self,
        chat_id: int,
        *,
        sender: str,
        items: list[dict],
        topic: int | None = None,
        slow_mode_seconds: int = 0,
        silent: bool = False,
    ) -> list[int] | None:
        """Post an album: one message per item ({"random_id", "text", "kind", "document_id", "entities"}), in
        order, sharing a new grouped_id; returns their ids, or None (nothing posted) when the chat remembers
        one of the random_ids."""
        grouped_id = secrets.randbits(62) + 1
        with self.transaction() as conn:
            now = clock()
            if any(self._remembered(conn, chat_id, item["random_id"], now) for item in items):
                return None
            self._slow_mode_check(conn, chat_id, sender, slow_mode_seconds, now)
            ids = []
            for item in items:
                message_id = self._next_id(conn, chat_id)
                conn.execute(
                    "INSERT INTO messages (chat_id, id, topic, sender, date, text, random_id, kind, document_id,"
                    " grouped_id, entities, silent) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        chat_id,
                        message_id,
                        topic,
                        sender,
                        now,
                        item["text"],
                        item["random_id"],
                        item["kind"],
                        item["document_id"],
                        grouped_id,
                        json.dumps(item["entities"]) if item["entities"] else None,
                        int(silent),
                    ),
                )
                ids.append(message_id)
        return ids

    def _remembered(self, conn: sqlite3.Connection, chat_id: int, random_id: int, now: float) -> bool:
        """Whether the chat still remembers a random_id (deleted messages included; for
        `random_id_memory_seconds`, or for ever)."""
        memory = self.meta("random_id_memory_seconds") or 0
        return bool(
            conn.execute(
                "SELECT 1 FROM messages WHERE chat_id = ? AND random_id = ? AND (? = 0 OR date > ?)",
                (chat_id, random_id, memory, now - memory),
            ).fetchone()
        )

    @staticmethod
    def _slow_mode_check(
        conn: sqlite3.Connection, chat_id: int, sender: str | None, slow_mode_seconds: int, now: float
    ) -> None:
        if slow_mode_seconds and sender is not None:
            row = conn.execute(
                "SELECT MAX(date) AS date FROM messages WHERE chat_id = ? AND sender = ?", (chat_id, sender)
            ).fetchone()
            if row["date"] is not None and now - row["date"] < slow_mode_seconds:
                raise SlowModeWait(math.ceil(slow_mode_seconds - (now - row["date"])))

    @staticmethod
    def _next_id(conn: sqlite3.Connection, chat_id: int) -> int:
        # deleted messages keep their ids, as in Telegram: ids are never reused
        return conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM messages WHERE chat_id = ?", (chat_id,)).fetchone()[0]

    def message_post(
        self,
        chat_id: int,
        *,
        text: str = "",
        document: dict | None = None,
        photo: str | None = None,
        topic: int | None = None,
        album: int | None = None,
        reply_to: int | None = None,
    ) -> list[int]:
        """Post as someone outside the project would (`sandbox_post`); a volume set posts one message a volume.

        `document` is a world-file document: {"name", "archive": [...]} or {"name", "size", "seed"}; `photo` the
        seed of a picture to post instead. `album` is Telegram's grouped_id, `reply_to` the message it answers.
        """
        chat = self.chat(chat_id)
        if chat is None:
            raise WorldError(f"The sandbox world has no chat {chat_id}.")
        if chat["forum"]:
            topic = GENERAL_TOPIC_ID if topic is None else topic
            if not self.topic_exists(chat_id, topic):
                raise WorldError(f"Chat {chat_id} has no topic {topic}.")
        elif topic is not None:
            raise WorldError(f"Chat {chat_id} is not a forum; it has no topics.")
        kind = None
        if document:
            kind, parts = "document", document_parts(self.path, document_spec(document, "document"))
        elif photo is not None:
            kind, parts = "photo", [photo_row(self.path, {"seed": photo}, "photo", default_seed=photo)]
        else:
            parts = [None]
        ids = []
        with self.transaction() as conn:
            now = clock()
            for index, part in enumerate(parts):
                message_id = self._next_id(conn, chat_id)
                document_id = document_insert(conn, part) if part else None
                conn.execute(
                    "INSERT INTO messages (chat_id, id, topic, sender, date, text, random_id, kind, document_id,"
                    " grouped_id, reply_to) VALUES (?, ?, ?, NULL, ?, ?, NULL, ?, ?, ?, ?)",
                    (
                        chat_id,
                        message_id,
                        topic,
                        now,
                        text if index == 0 else "",
                        kind if part else None,
                        document_id,
                        album,
                        reply_to if index == 0 else None,
                    ),
                )
                ids.append(message_id)
        return ids

    def message_replace(self, chat_id: int, message_id: int, document: dict | None = None) -> int:
        """Put a new document under a message, as an edit that replaces its file does; returns the new document's
        id. `document` is a world-file document (one volume); without it the new file keeps the old one's name and
        size with other bytes. The old file reference dies with the old document, as Telegram's does."""
        message = self.message(chat_id, message_id)
        if message is None or message["document_id"] is None:
            raise WorldError(f"Chat {chat_id} has no message {message_id} with a file to replace.")
        old = self.document(message["document_id"])
        if document is None:
            row = _document_row(old["name"], old["size"], None, "seed", f"replaced-{old['id']}", old["size"], 0)
        else:
            parts = document_parts(self.path, document_spec(document, "document"))
            if len(parts) != 1:
                raise WorldError("A message holds one file: a replacement cannot be split into volumes.")
            row = parts[0]
        with self.transaction() as conn:
            document_id = document_insert(conn, row)
            conn.execute(
                "UPDATE messages SET document_id = ? WHERE chat_id = ? AND id = ?", (document_id, chat_id, message_id)
            )
        return document_id

    def member_set(self, chat_id: int, phone: str, *, member: bool = True, admin: bool = False) -> None:
        """Add an account to a chat (or make it admin), or remove it, as the chat's owner would."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM chat_members WHERE chat_id = ? AND phone = ?", (chat_id, phone))
            if member:
                conn.execute("INSERT INTO chat_members VALUES (?, ?, ?)", (chat_id, phone, admin))

    def join_request_add(self, chat_id: int, phone: str) -> None:
        with self.transaction() as conn:
            conn.execute("INSERT OR IGNORE INTO join_requests VALUES (?, ?)", (chat_id, phone))

    def channel_create(self, *, title: str, creator: str, type: str = "channel", forum: bool = False) -> int:
        """A new channel (or supergroup) its creator administers; returns its id."""
        with self.transaction() as conn:
            chat_id = max(
                CREATED_CHAT_ID_BASE, conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM chats").fetchone()[0]
            )
            conn.execute(
                "INSERT INTO chats (id, title, type, forum, slow_mode_seconds, members_can_post, role)"
                " VALUES (?, ?, ?, ?, 0, ?, NULL)",
                (chat_id, title, type, forum, type != "channel"),
            )
            conn.execute("INSERT INTO chat_members VALUES (?, ?, 1)", (chat_id, creator))
        return chat_id

    def saved_messages(self, phone: str) -> dict:
        """The account's Saved Messages (InputPeerSelf): a `user` chat whose id is its own user id, made at its
        first message, with no members, so it is never among the chats the account lists."""
        user_id = self.account(phone)["user_id"]
        with self.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO chats (id, title, type, forum, slow_mode_seconds, members_can_post, role)"
                " VALUES (?, 'Saved Messages', ?, 0, 0, 1, ?)",
                (user_id, USER, SAVED_MESSAGES_ROLE),
            )
        return self.chat(user_id)

    def scheduled_deliver(self) -> None:
        """Post the world file's later messages that are due, each with its chat's next id, as people would."""
        now = clock()
        if self._one("SELECT 1 FROM scheduled WHERE due <= ? LIMIT 1", (now,)) is None:
            return
        with self.transaction() as conn:
            for row in conn.execute("SELECT * FROM scheduled WHERE due <= ? ORDER BY due, seq", (now,)).fetchall():
                conn.execute(
                    "INSERT INTO messages (chat_id, id, topic, sender, date, text, random_id, kind, document_id)"
                    " VALUES (?, ?, ?, NULL, ?, ?, NULL, ?, ?)",
                    (
                        row["chat_id"],
                        self._next_id(conn, row["chat_id"]),
                        row["topic"],
                        row["due"],
                        row["text"],
                        row["kind"],
                        row["document_id"],
                    ),
                )
                conn.execute("DELETE FROM scheduled WHERE seq = ?", (row["seq"],))

    def messages_delete(self, chat_id: int, ids: list[int], *, sender: str) -> list[int]:
        """Delete the sender's own messages among ids (others' stay, as Telegram answers for a non-admin); ids
        already gone are skipped. Returns the ids deleted."""
        with self.transaction() as conn:
            deleted = [
                message_id
                for message_id in ids
                if conn.execute(
                    "UPDATE messages SET deleted = 1 WHERE chat_id = ? AND id = ? AND sender = ? AND NOT deleted",
                    (chat_id, message_id, sender),
                ).rowcount
            ]
        return deleted

    def message_pin(self, chat_id: int, message_id: int, *, pinned: bool) -> bool:
        """Pin or unpin a message; False when it is gone."""
        with self.transaction() as conn:
            return bool(
                conn.execute(
                    "UPDATE messages SET pinned = ? WHERE chat_id = ? AND id = ? AND NOT deleted",
                    (int(pinned), chat_id, message_id),
                ).rowcount
            )

    def message_delete(self, chat_id: int, message_id: int) -> None:
        """Delete a message, as its author or an admin would; its id stays taken."""
        with self.transaction() as conn:
            deleted = conn.execute(
                "UPDATE messages SET deleted = 1 WHERE chat_id = ? AND id = ? AND NOT deleted", (chat_id, message_id)
            ).rowcount
        if not deleted:
            raise WorldError(f"Chat {chat_id} has no message {message_id} to delete.")
