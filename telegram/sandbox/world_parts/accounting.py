"""What the sandbox world counts and limits: requests per account and method, injected faults, FloodWaits,
sends per window and bandwidth."""

import math
from collections.abc import Iterable

from telegram.sandbox.faults import FaultError, fault_parse
from telegram.sandbox.world_parts.base import WorldError


class Accounting:
    """Requests counted and faulted, send and bandwidth limits, stats."""

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
            now = self.now()
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
            now = self.now()
            free_at = max(now, row["link_free_at"]) + size / row["bandwidth_bytes_per_s"]
            conn.execute("UPDATE accounts SET link_free_at = ? WHERE phone = ?", (free_at, phone))
        return free_at - now

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
