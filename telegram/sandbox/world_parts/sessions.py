"""Accounts and sessions of the sandbox world: MTProto authorization keys, logged-in sessions issued to tests
and tools, and the connections of each process (so one session used from two processes is noticed)."""

import os
import secrets
from pathlib import Path

from telethon.crypto import AuthKey
from telethon.sessions import StringSession

from telegram.sandbox.world_parts.base import ACCOUNT_FIELDS, DC_ADDRESSES, DC_PORT, WorldError


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


class Sessions:
    """Accounts, authorization keys and connections."""

    def account(self, phone: str) -> dict | None:
        row = self._one("SELECT * FROM accounts WHERE phone = ?", (phone,))
        return None if row is None else dict(row)

    def accounts(self) -> list[dict]:
        return [dict(row) for row in self.conn.execute("SELECT * FROM accounts ORDER BY phone")]

    def upload_max_bytes(self, phone: str) -> int:
        account = self.account(phone)
        return self.meta("premium_upload_max_bytes" if account and account["premium"] else "upload_max_bytes")

    def account_update(self, phone: str, **fields) -> None:
        """Change a world account (e.g. premium=True), as Telegram's side can change between logins."""
        unknown = set(fields) - set(ACCOUNT_FIELDS)
        if unknown or self.account(phone) is None:
            raise WorldError(f"Cannot update {sorted(unknown) or phone} of a sandbox account.")
        with self.transaction() as conn:
            for key, value in fields.items():
                conn.execute(f"UPDATE accounts SET {key} = ? WHERE phone = ?", (value, phone))

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
