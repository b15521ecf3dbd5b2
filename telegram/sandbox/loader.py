"""Loading a sandbox world file (DESIGN.md, "Sandbox world file (JSON, v1)"): `world_load()` checks it and
replaces the world database with its content. The store that reads and changes it is `World` (world.py)."""

import json
import os
from pathlib import Path

from telegram.links import INVITE_HASH, USERNAME
from telegram.records import (
    CHAT_TYPES,
    GENERAL_TOPIC_ID,
    GROUP,
    PREMIUM_UPLOAD_MAX_BYTES,
    SUPERGROUP,
    UPLOAD_MAX_BYTES,
    USER,
)
from telegram.sandbox import world as store
from telegram.sandbox.bots import bot_specs, bots_insert, people_insert, people_specs
from telegram.sandbox.faults import FaultError, fault_parse
from telegram.sandbox.world import (
    BASE_DATE,
    BLOBS_DIR,
    CHANNELS_MAX,
    DB_NAME,
    DC_IDS,
    DEFAULT_DC_ID,
    DOCUMENT_ID_BASE,
    LOGIN_ANSWERS,
    QUIRKS,
    SCHEMA,
    TABLES,
    WorldError,
    connect,
    document_insert,
    document_parts,
    document_spec,
    immediate,
    photo_row,
)

# -- loading a world file -----------------------------------------------------------------------------------------


def _int(value, where: str, *, minimum: int = 0) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise WorldError(f"{where} must be an integer ≥ {minimum}, got {value!r}")
    return value


def _accounts(data: dict) -> list[dict]:
    accounts, phones = [], set()
    for spec in data.get("accounts") or []:
        phone = spec.get("phone") if isinstance(spec, dict) else None
        if not isinstance(phone, str) or not phone.startswith("+") or not phone[1:].isdigit():
            raise WorldError(f"account {spec!r}: 'phone' must be in international format, e.g. +15550000001")
        if phone in phones:
            raise WorldError(f"account {phone} is listed twice")
        phones.add(phone)
        bandwidth = spec.get("bandwidth_bytes_per_s")
        flood_above = spec.get("flood_above_per_minute")
        login = spec.get("login", "code")
        if login not in LOGIN_ANSWERS:
            raise WorldError(f"account {phone}: 'login' must be one of {', '.join(LOGIN_ANSWERS)}, got {login!r}")
        dc_id = spec.get("dc", DEFAULT_DC_ID)
        if dc_id not in DC_IDS:
            raise WorldError(f"account {phone}: 'dc' must be one of {DC_IDS}, got {dc_id!r}")
        accounts.append(
            {
                "phone": phone,
                "user_id": _int(spec.get("user_id", int(phone[1:])), f"account {phone}: 'user_id'", minimum=1),
                "first_name": str(spec.get("first_name") or phone),
                "last_name": str(spec.get("last_name") or ""),
                "username": str(spec.get("username") or ""),
                "premium": bool(spec.get("premium", False)),
                "code": str(spec.get("code", "12345")),
                "password": None if spec.get("password") is None else str(spec["password"]),
                "bandwidth_bytes_per_s": None
                if bandwidth is None
                else _int(bandwidth, f"account {phone}: 'bandwidth_bytes_per_s'", minimum=1),
                "dc_id": dc_id,
                "banned": bool(spec.get("banned", False)),
                "login": login,
                "flood_above_per_minute": None
                if flood_above is None
                else _int(flood_above, f"account {phone}: 'flood_above_per_minute'", minimum=1),
            }
        )
    return accounts


def _migrated_to(spec: dict, where: str, chat_type: str) -> int | None:
    """A basic group upgraded to a supergroup names it (Telegram's Chat.migrated_to); checked once all are read."""
    if spec.get("migrated_to") is None:
        return None
    if chat_type != GROUP:
        raise WorldError(f"{where}: only a 'group' can have migrated to a supergroup")
    return _int(spec["migrated_to"], f"{where}: 'migrated_to'", minimum=1)


def _deactivated(spec: dict, where: str, chat_type: str) -> bool:
    """A basic group deleted (deactivated) without a successor."""
    deactivated = bool(spec.get("deactivated", False))
    if deactivated and chat_type != GROUP:
        raise WorldError(f"{where}: only a 'group' can be deactivated")
    return deactivated


def _chat(spec, users: dict[str, int], seen_ids: set[int]) -> dict:
    """One chat of the world file; `users` maps each account's phone to its user id."""
    if not isinstance(spec, dict):
        raise WorldError(f"chat {spec!r} must be an object")
    chat_id = _int(spec.get("id"), "chat 'id'", minimum=1)
    where = f"chat {chat_id}"
    if chat_id in seen_ids:
        raise WorldError(f"{where} is listed twice")
    seen_ids.add(chat_id)
    chat_type = spec.get("type", "channel")
    if chat_type not in CHAT_TYPES:
        raise WorldError(f"{where}: 'type' must be one of {', '.join(CHAT_TYPES)}, got {chat_type!r}")
    members = list(spec.get("members") or [])
    admins = list(spec.get("admins") or [])
    for phone in members + admins:
        if phone not in users:
            raise WorldError(f"{where}: {phone!r} is not one of the world's accounts")
    role = spec.get("role")
    if role is not None and not isinstance(role, str):
        raise WorldError(f'{where}: \'role\' must be a string such as "source" or "destination"')
    if chat_type == USER:
        _person_check(spec, where, users)
    forum = bool(spec.get("forum", False))
    topics, closed = {}, set()
    # Only forums have topics in Telegram: a non-forum chat's topics (and its messages' topics) are ignored.
    for topic in (spec.get("topics") or []) if forum else []:
        topic_id = _int(topic.get("id") if isinstance(topic, dict) else None, f"{where}: topic 'id'", minimum=1)
        topics[topic_id] = str(topic.get("title") or f"Topic {topic_id}")
        if topic.get("closed"):
            closed.add(topic_id)
    if forum:
        topics.setdefault(GENERAL_TOPIC_ID, "General")
    username = str(spec.get("username") or "")
    if username and chat_type != USER and not USERNAME.fullmatch(username):
        raise WorldError(f"{where}: 'username' must be 4 to 32 letters, digits or underscores, starting with a letter")
    return {
        "id": chat_id,
        "title": str(spec.get("title") or (f"Person {chat_id}" if chat_type == USER else where)),
        "username": username,
        "type": chat_type,
        "forum": forum,
        "slow_mode_seconds": _int(spec.get("slow_mode_seconds", 0), f"{where}: 'slow_mode_seconds'"),
        "members_can_post": bool(spec.get("members_can_post", True)),
        "role": role,
        "migrated_to": _migrated_to(spec, where, chat_type),
        "deactivated": _deactivated(spec, where, chat_type),
        "other_members": _int(spec.get("other_members", 0), f"{where}: 'other_members'"),
        "join_request": bool(spec.get("join_request", False)),
        "invites": _invites(spec, where, chat_type),
        "members": {phone: False for phone in members} | {phone: True for phone in admins},
        "topics": topics,
        "closed_topics": closed,
        "messages": spec.get("messages") or [],
    }


def _invites(spec: dict, where: str, chat_type: str) -> list[dict]:
    """A chat's invite links (t.me/+HASH): {"hash", "expired", "revoked", "request_needed"}."""
    invites = []
    for invite in spec.get("invites") or []:
        invite_hash = invite.get("hash") if isinstance(invite, dict) else None
        if not isinstance(invite_hash, str) or not INVITE_HASH.fullmatch(invite_hash):
            raise WorldError(f"{where}: an invite needs a 'hash' of 8 to 64 letters, digits, '-' or '_'")
        if chat_type == USER:
            raise WorldError(f"{where}: a private chat with a person has no invite links")
        state = "revoked" if invite.get("revoked") else "expired" if invite.get("expired") else "valid"
        invites.append({"hash": invite_hash, "state": state, "request_needed": bool(invite.get("request_needed"))})
    return invites


def _person_check(spec: dict, where: str, users: dict[str, int]) -> None:
    """A person ('type': 'user') is someone outside the world's accounts; `members` are the accounts that have
    a private chat with them."""
    owner = next((phone for phone, user_id in users.items() if user_id == spec["id"]), None)
    if owner is not None:
        raise WorldError(
            f"{where}: {spec['id']} is the user id of account {owner}; a person ('type': 'user') is "
            "someone outside the world's accounts, give them another id"
        )
    if spec.get("admins"):
        raise WorldError(
            f"{where}: a person has no admins; list the accounts that have a private chat with them in 'members'"
        )
    if spec.get("role") is not None:
        raise WorldError(f"{where}: a person cannot be a source or the destination; leave 'role' out")
    if spec.get("forum"):
        raise WorldError(f"{where}: a private chat with a person has no topics; leave 'forum' out")


def _chat_messages(root: Path, chat: dict, loaded_at: float) -> list[dict]:
    """Message rows of a chat, with their documents (volume sets become consecutive messages)."""
    rows, taken = [], set()
    for spec in chat["messages"]:
        if not isinstance(spec, dict):
            raise WorldError(f"chat {chat['id']}: message {spec!r} must be an object")
        message_id = _int(spec.get("id"), f"chat {chat['id']}: message 'id'", minimum=1)
        where = f"chat {chat['id']}, message {message_id}"
        topic = spec.get("topic", GENERAL_TOPIC_ID) if chat["forum"] else None
        if topic is not None and topic not in chat["topics"]:
            raise WorldError(f"{where}: topic {topic!r} is not a topic of this forum")
        text = str(spec.get("text") or "")
        # A volume set's later volumes carry no text unless `volume_texts` gives each its own.
        volume_texts = spec.get("volume_texts")
        if volume_texts is not None and not (
            isinstance(volume_texts, list) and all(isinstance(item, str) for item in volume_texts)
        ):
            raise WorldError(f"{where}: 'volume_texts' must be a list of strings, one per volume")
        arrives_after = spec.get("arrives_after_seconds")
        if arrives_after is not None:
            arrives_after = _int(arrives_after, f"{where}: 'arrives_after_seconds'")
        interval = _int(spec.get("volume_interval_seconds", 0), f"{where}: 'volume_interval_seconds'")
        # An album is Telegram's grouped_id; reply_to the id of the message it answers.
        album = None if spec.get("album") is None else _int(spec["album"], f"{where}: 'album'", minimum=1)
        reply_to = None if spec.get("reply_to") is None else _int(spec["reply_to"], f"{where}: 'reply_to'", minimum=1)
        if "document" in spec:
            kind, documents = "document", document_parts(root, document_spec(spec["document"], where))
        elif "photo" in spec:
            kind = "photo"
            documents = [photo_row(root, spec["photo"], where, default_seed=f"photo:{chat['id']}:{message_id}")]
            text = text or str(spec["photo"].get("caption") or "")
        else:
            kind, documents = None, [None]
        for offset, document in enumerate(documents):
            if message_id + offset in taken:
                raise WorldError(f"{where}: message id {message_id + offset} is used twice in this chat")
            taken.add(message_id + offset)
            rows.append(
                {
                    "id": message_id + offset,
                    "topic": topic,
                    "date": BASE_DATE.timestamp() + message_id + offset,
                    # Posted later: it takes the chat's next id when it is due (`World.scheduled_deliver`).
                    "due": None if arrives_after is None else loaded_at + arrives_after + offset * interval,
                    "text": volume_texts[offset]
                    if volume_texts and offset < len(volume_texts)
                    else (text if offset == 0 else ""),
                    "kind": kind,
                    "document": document,
                    "grouped_id": album,
                    "reply_to": reply_to if offset == 0 else None,
                }
            )
    return sorted(rows, key=lambda row: row["id"])


def world_load(path: str | os.PathLike, data: dict) -> None:
    """Replace the world at `path` with a world file's content; WorldError says what is wrong with it."""
    if not isinstance(data, dict):
        raise WorldError("a world file holds one JSON object")
    root = Path(path)
    root.mkdir(parents=True, exist_ok=True)
    limits = data.get("limits") or {}
    quirks = data.get("quirks") or {}
    network = data.get("network") or {}
    if not all(isinstance(block, dict) for block in (limits, quirks, network)):
        raise WorldError("'limits', 'quirks' and 'network' must be objects")
    meta = {
        "version": 1,
        "upload_max_bytes": _int(
            limits.get("upload_max_bytes", UPLOAD_MAX_BYTES), "limits.upload_max_bytes", minimum=1
        ),
        "premium_upload_max_bytes": _int(
            limits.get("premium_upload_max_bytes", PREMIUM_UPLOAD_MAX_BYTES),
            "limits.premium_upload_max_bytes",
            minimum=1,
        ),
        "rtt_ms": _int(network.get("rtt_ms", 0), "network.rtt_ms"),
        "connection_bytes_per_s": _int(network.get("connection_bytes_per_s", 0), "network.connection_bytes_per_s"),
    }
    for key, default in QUIRKS.items():
        value = quirks.get(key, limits.get(key, default))
        if isinstance(default, bool):
            meta[key] = bool(value)
        else:
            meta[key] = _int(value, f"quirks.{key}", minimum=1 if default else 0)
    accounts = _accounts(data)
    chat_ids: set[int] = set()
    users = {account["phone"]: account["user_id"] for account in accounts}
    chats = [_chat(spec, users, chat_ids) for spec in data.get("chats") or []]
    supergroups = {chat["id"] for chat in chats if chat["type"] == SUPERGROUP}
    for chat in chats:
        if chat["migrated_to"] is not None and chat["migrated_to"] not in supergroups:
            raise WorldError(f"chat {chat['id']}: 'migrated_to' must name a supergroup of the world")
    invite_hashes = [invite["hash"] for chat in chats for invite in chat["invites"]]
    if len(set(invite_hashes)) != len(invite_hashes):
        raise WorldError("an invite 'hash' is used by two invites; each link is one chat's")
    bots = bot_specs(data, {chat["id"] for chat in chats})
    people = people_specs(data)
    meta["channels_max"] = _int(limits.get("channels_max", CHANNELS_MAX), "limits.channels_max", minimum=1)
    meta["invites_refused_by"] = [
        spec["phone"] for spec in data.get("accounts") or [] if spec.get("invites_allowed", True) is False
    ]
    try:
        faults = [fault_parse(spec) for spec in data.get("faults") or []]
    except FaultError as exc:
        raise WorldError(str(exc)) from None
    # Blobs are content-addressed, so the old world's stay readable until the new one is committed.
    loaded_at = store.clock()  # through the module: tests set the world clock there
    messages = {chat["id"]: _chat_messages(root, chat, loaded_at) for chat in chats}

    conn = connect(root / DB_NAME, create=True)
    try:
        conn.execute("PRAGMA journal_mode = WAL")
        with immediate(conn):
            for table in TABLES:
                conn.execute(f"DROP TABLE IF EXISTS {table}")
            conn.execute("DROP INDEX IF EXISTS messages_random_id")
            for statement in SCHEMA:
                conn.execute(statement)
            meta["next_document_id"] = DOCUMENT_ID_BASE + 1
            conn.executemany(
                "INSERT INTO meta VALUES (?, ?)", [(key, json.dumps(value)) for key, value in meta.items()]
            )
            for account in accounts:
                conn.execute(
                    "INSERT INTO accounts VALUES (:phone, :user_id, :first_name, :last_name, :username, :premium,"
                    " :code, :password, :bandwidth_bytes_per_s, :dc_id, :banned, :login, :flood_above_per_minute, 0)",
                    account,
                )
            for chat in chats:
                conn.execute(
                    "INSERT INTO chats VALUES (:id, :title, :type, :forum, :slow_mode_seconds, :members_can_post,"
                    " :role, :username, :migrated_to, :deactivated, :other_members, :join_request)",
                    chat,
                )
                conn.executemany(
                    "INSERT INTO invites VALUES (:hash, :chat_id, :state, :request_needed)",
                    [invite | {"chat_id": chat["id"]} for invite in chat["invites"]],
                )
                conn.executemany(
                    "INSERT INTO chat_members VALUES (?, ?, ?)",
                    [(chat["id"], phone, admin) for phone, admin in chat["members"].items()],
                )
                conn.executemany(
                    "INSERT INTO topics VALUES (?, ?, ?, ?)",
                    [
                        (chat["id"], topic_id, title, topic_id in chat["closed_topics"])
                        for topic_id, title in chat["topics"].items()
                    ],
                )
                for row in messages[chat["id"]]:
                    document_id = document_insert(conn, row["document"]) if row["document"] else None
                    if row["due"] is not None:
                        conn.execute(
                            "INSERT INTO scheduled (chat_id, due, topic, text, kind, document_id)"
                            " VALUES (?, ?, ?, ?, ?, ?)",
                            (chat["id"], row["due"], row["topic"], row["text"], row["kind"], document_id),
                        )
                        continue
                    conn.execute(
                        "INSERT INTO messages (chat_id, id, topic, sender, date, text, random_id, kind, document_id,"
                        " grouped_id, reply_to) VALUES (?, ?, ?, NULL, ?, ?, NULL, ?, ?, ?, ?)",
                        (
                            chat["id"],
                            row["id"],
                            row["topic"],
                            row["date"],
                            row["text"],
                            row["kind"],
                            document_id,
                            row["grouped_id"],
                            row["reply_to"],
                        ),
                    )
            bots_insert(conn, bots)
            people_insert(conn, people, loaded_at)
            conn.executemany(
                "INSERT INTO faults (op, error, account, chat, message, seconds, times, after)"
                " VALUES (:op, :error, :account, :chat, :message, :seconds, :times, :after)",
                faults,
            )
        kept = {row[0] for row in conn.execute("SELECT DISTINCT source_key FROM documents WHERE source = 'blob'")}
    finally:
        conn.close()
    for blob in (root / BLOBS_DIR).glob("[!.]*"):  # dot-files are uploads and builds in progress
        if blob.name not in kept:
            blob.unlink(missing_ok=True)
