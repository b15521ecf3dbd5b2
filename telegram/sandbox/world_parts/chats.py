"""Chats of the sandbox world: who is in them, topics, invites and join requests, and changes an owner or
Telegram makes (new channels, migrations, Saved Messages)."""

import hashlib

from telegram.records import GROUP, USER
from telegram.sandbox.world_parts.base import CREATED_CHAT_ID_BASE, SAVED_MESSAGES_ROLE, WorldError


def chat_access_hash(*, phone: str, chat_id: int, type: str) -> int:
    """Deterministic per (account, chat), as Telegram's access hashes are per account (tl.access_hash).

    Basic groups have none in Telegram (they are addressed by id alone): 0. A person's is a user's hash.
    """
    if type == GROUP:
        return 0
    kind = "user" if type == USER else "chat"
    return int.from_bytes(hashlib.sha256(f"{kind}:{phone}:{chat_id}".encode()).digest()[:8], "big", signed=True)


class Chats:
    """Chats, their members and topics."""

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
