"""Messages of the sandbox world: reading them, posting (one, an album, as someone outside the project),
replacing a file, deleting and pinning, the world file's later messages, and a chat's dump."""

import json
import math
import secrets
import sqlite3

from telegram.records import GENERAL_TOPIC_ID
from telegram.sandbox.world_parts.base import SlowModeWait, WorldError, iso_date
from telegram.sandbox.world_parts.documents import (
    _document_row,
    document_insert,
    document_parts,
    document_spec,
    photo_row,
)


class Messages:
    """Messages: reads, posts, edits and deletes."""

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
                    "edit_date": iso_date(row["edit_date"]) if row["edit_date"] is not None else None,
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
            now = self.now()
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
            now = self.now()
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
            now = self.now()
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
        size with other bytes. The old file reference dies with the old document, as Telegram's does; the message
        carries the edit's date (edit_date), as an edited post does."""
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
                "UPDATE messages SET document_id = ?, edit_date = ? WHERE chat_id = ? AND id = ?",
                (document_id, self.now(), chat_id, message_id),
            )
        return document_id

    def scheduled_deliver(self) -> None:
        """Post the world file's later messages that are due, each with its chat's next id, as people would."""
        now = self.now()
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
