"""Bots in the sandbox world, and the people who talk to them.

A bot (world key `bots`) logs in with its token (auth.importBotAuthorization); its key is then bound to
`bot_phone(id)`, the name the world's access hashes and memberships use for it, as an account's phone. Each
person has one private chat with each bot: `bot_messages`. Telegram's rule holds: a bot writes only to people
who wrote to it first.

`bot_updates` is the bot's update log. New and edited messages take the bot's next `pts` (Telegram's common
message box), so a client that missed some gets them from updates.getDifference; callback queries carry
no pts, as in Telegram. Rows with `pushed` are what the server pushes to the bot's live connections (what a
person did); the bot's own sends come back in its answers.
"""

import json

from telegram.records import USER
from telegram.sandbox import world as store

BOT_PREFIX = "bot:"


class NotStarted(Exception):
    """The person never wrote to the bot: Telegram lets no bot start a conversation."""


def bot_phone(bot_id: int) -> str:
    return f"{BOT_PREFIX}{bot_id}"


def bot_id_of(phone: str | None) -> int | None:
    """The bot a key's `phone` names, None for an account."""
    return int(phone.removeprefix(BOT_PREFIX)) if phone and phone.startswith(BOT_PREFIX) else None


def bots_insert(conn, specs: list[dict]) -> None:
    """The loader's part: the bots of a world file, and the chats they administer (`admin_of`)."""
    for spec in specs:
        conn.execute("INSERT INTO bots VALUES (:id, :username, :token, :name)", spec)
        conn.executemany(
            "INSERT OR REPLACE INTO chat_members VALUES (?, ?, 1)",
            [(chat_id, bot_phone(spec["id"])) for chat_id in spec["admin_of"]],
        )


def bot_specs(data: dict, chat_ids: set[int]) -> list[dict]:
    """The world file's `bots`, checked: [{"id", "username", "token", "name"?, "admin_of"?: [chat ids]}]."""
    specs, seen = [], set()
    for spec in data.get("bots") or []:
        where = f"bot {spec!r}"
        if not isinstance(spec, dict) or not isinstance(spec.get("id"), int) or spec["id"] <= 0:
            raise store.WorldError(f"{where}: 'id' must be a positive integer")
        username = spec.get("username")
        if not isinstance(username, str) or not username.lower().endswith("bot"):
            raise store.WorldError(f"{where}: 'username' must end in 'bot', as Telegram's bot usernames do")
        token = spec.get("token")
        if not isinstance(token, str) or not token.startswith(f"{spec['id']}:"):
            raise store.WorldError(f"{where}: 'token' must be '<id>:<secret>', as BotFather gives it")
        if spec["id"] in seen:
            raise store.WorldError(f"{where}: bot {spec['id']} is listed twice")
        seen.add(spec["id"])
        admin_of = spec.get("admin_of") or []
        if any(chat_id not in chat_ids for chat_id in admin_of):
            raise store.WorldError(f"{where}: 'admin_of' must name chats of the world")
        specs.append(
            {
                "id": spec["id"],
                "username": username.lstrip("@"),
                "token": token,
                "name": spec.get("name") or username,
                "admin_of": admin_of,
            }
        )
    return specs


def people_specs(data: dict) -> list[tuple[int, int]]:
    """The world file's chats' `people`: (chat id, person id) for each person in a channel or supergroup."""
    chats = [spec for spec in data.get("chats") or [] if isinstance(spec, dict)]
    person_ids = {spec.get("id") for spec in chats if spec.get("type") == USER}
    found = []
    for spec in chats:
        people = spec.get("people") or []
        if people and spec.get("type", "channel") not in ("channel", "supergroup"):
            raise store.WorldError(f"chat {spec.get('id')}: 'people' are for channels and supergroups")
        for user_id in people:
            if user_id not in person_ids:
                where = f"chat {spec.get('id')}"
                raise store.WorldError(f"{where}: 'people' must name chats of type 'user', got {user_id!r}")
            found.append((spec["id"], user_id))
    return found


def people_insert(conn, people: list[tuple[int, int]], date: float) -> None:
    conn.executemany("INSERT OR IGNORE INTO chat_people VALUES (?, ?, ?)", [(*row, date) for row in people])


def person_in(world, chat_id: int, user_id: int) -> dict | None:
    row = world.conn.execute(
        "SELECT * FROM chat_people WHERE chat_id = ? AND user_id = ?", (chat_id, user_id)
    ).fetchone()
    return None if row is None else dict(row)


def person_joins(world, *, chat_id: int, user_id: int) -> None:
    _person(world, user_id)
    with world.transaction() as conn:
        conn.execute("INSERT OR IGNORE INTO chat_people VALUES (?, ?, ?)", (chat_id, user_id, store.clock()))


def person_leaves(world, *, chat_id: int, user_id: int) -> None:
    with world.transaction() as conn:
        conn.execute("DELETE FROM chat_people WHERE chat_id = ? AND user_id = ?", (chat_id, user_id))


def bot(world, *, bot_id: int | None = None, username: str | None = None, token: str | None = None) -> dict | None:
    if bot_id is not None:
        row = world.conn.execute("SELECT * FROM bots WHERE id = ?", (bot_id,)).fetchone()
    elif username is not None:
        row = world.conn.execute(
            "SELECT * FROM bots WHERE lower(username) = lower(?)", (username.lstrip("@"),)
        ).fetchone()
    else:
        row = world.conn.execute("SELECT * FROM bots WHERE token = ?", (token,)).fetchone()
    return None if row is None else dict(row)


def _bot_named(world, username: str) -> dict:
    row = bot(world, username=username)
    if row is None:
        raise store.WorldError(f"The sandbox world has no bot {username}.")
    return row


def _person(world, user_id: int) -> dict:
    row = world.chat(user_id)
    if row is None or row["type"] != USER:
        raise store.WorldError(f"The sandbox world has no person {user_id} (a chat of type 'user').")
    return row


def pts(world, bot_id: int) -> int:
    row = world.conn.execute("SELECT max(pts) FROM bot_updates WHERE bot_id = ?", (bot_id,)).fetchone()
    return row[0] or 0


def last_seq(world, bot_id: int) -> int:
    row = world.conn.execute("SELECT max(seq) FROM bot_updates WHERE bot_id = ?", (bot_id,)).fetchone()
    return row[0] or 0


def session_open(world, *, key_id: str, bot_id: int) -> None:
    """A key logs in as the bot: its connections are pushed what people do from now on."""
    with world.transaction() as conn:
        conn.execute("INSERT OR REPLACE INTO bot_sessions VALUES (?, ?, ?)", (key_id, bot_id, last_seq(world, bot_id)))


def session(world, key_id: str) -> dict | None:
    row = world.conn.execute("SELECT * FROM bot_sessions WHERE key_id = ?", (key_id,)).fetchone()
    return None if row is None else dict(row)


def _log(conn, *, bot_id: int, kind: str, user_id: int, message_id: int, pushed: bool, **extra) -> int | None:
    """Append to the bot's update log; the pts taken (None for a callback query)."""
    new_pts = None
    if kind != "callback":
        row = conn.execute("SELECT max(pts) FROM bot_updates WHERE bot_id = ?", (bot_id,)).fetchone()
        new_pts = (row[0] or 0) + 1
    conn.execute(
        "INSERT INTO bot_updates (bot_id, pts, kind, user_id, message_id, query_id, data, pushed)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        (bot_id, new_pts, kind, user_id, message_id, extra.get("query_id"), extra.get("data"), pushed),
    )
    return new_pts


def _message_add(conn, *, bot_id: int, user_id: int, from_bot: bool, text: str, **extra) -> int:
    row = conn.execute("SELECT max(id) FROM bot_messages WHERE bot_id = ?", (bot_id,)).fetchone()
    message_id = (row[0] or 0) + 1
    conn.execute(
        "INSERT INTO bot_messages VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (
            bot_id,
            message_id,
            user_id,
            from_bot,
            store.clock(),
            text,
            json.dumps(extra["buttons"]) if extra.get("buttons") else None,
            extra.get("kind"),
            extra.get("document_id"),
        ),
    )
    return message_id


def as_account(world, phone: str) -> dict | None:
    """A logged-in bot in the shape of an account, for the methods bots share with accounts."""
    bot_id = bot_id_of(phone)
    row = bot(world, bot_id=bot_id) if bot_id is not None else None
    if row is None:
        return None
    return {
        "phone": phone,
        "user_id": row["id"],
        "first_name": row["name"],
        "last_name": "",
        "username": row["username"],
        "premium": 0,
        "banned": 0,
        "bandwidth_bytes_per_s": None,
        "flood_above_per_minute": None,
        "dc_id": store.DEFAULT_DC_ID,
        "bot": True,
    }


def person_says(world, *, user_id: int, username: str, text: str) -> int:
    """A person writes to a bot (`sandbox_say`); the new message's id."""
    if not text.strip():
        raise store.WorldError("A message to a bot needs some text.")
    _person(world, user_id)
    bot_id = _bot_named(world, username)["id"]
    with world.transaction() as conn:
        message_id = _message_add(conn, bot_id=bot_id, user_id=user_id, from_bot=False, text=text)
        _log(conn, bot_id=bot_id, kind="new", user_id=user_id, message_id=message_id, pushed=True)
    return message_id


def person_presses(world, *, user_id: int, username: str, message_id: int, button: str) -> int:
    """A person presses an inline button of a bot's message (`sandbox_press`); the callback query's id."""
    _person(world, user_id)
    bot_id = _bot_named(world, username)["id"]
    row = message(world, bot_id, message_id)
    if row is None or row["user_id"] != user_id or not row["from_bot"]:
        raise store.WorldError(f"Person {user_id} has no message {message_id} from {username}.")
    pressed = [b for line in json.loads(row["buttons"] or "[]") for b in line if b["text"] == button and "data" in b]
    if not pressed:
        raise store.WorldError(f"Message {message_id} has no button {button!r}.")
    data = bytes.fromhex(pressed[0]["data"])
    with world.transaction() as conn:
        query_id = conn.execute("SELECT coalesce(max(query_id), 0) + 1 FROM bot_callbacks").fetchone()[0]
        conn.execute(
            "INSERT INTO bot_callbacks (query_id, bot_id, user_id, message_id, data) VALUES (?, ?, ?, ?, ?)",
            (query_id, bot_id, user_id, message_id, data),
        )
        _log(
            conn,
            bot_id=bot_id,
            kind="callback",
            user_id=user_id,
            message_id=message_id,
            pushed=True,
            query_id=query_id,
            data=data,
        )
    return query_id


def started(world, bot_id: int, user_id: int) -> bool:
    row = world.conn.execute(
        "SELECT 1 FROM bot_messages WHERE bot_id = ? AND user_id = ? AND NOT from_bot LIMIT 1", (bot_id, user_id)
    ).fetchone()
    return row is not None


def bot_sends(world, *, bot_id: int, user_id: int, text: str, buttons=None, kind=None, document_id=None):
    """The bot posts to a person: (message id, pts). NotStarted when the person never wrote to it."""
    with world.transaction() as conn:
        if not started(world, bot_id, user_id):
            raise NotStarted(user_id)
        message_id = _message_add(
            conn,
            bot_id=bot_id,
            user_id=user_id,
            from_bot=True,
            text=text,
            buttons=buttons,
            kind=kind,
            document_id=document_id,
        )
        new_pts = _log(conn, bot_id=bot_id, kind="new", user_id=user_id, message_id=message_id, pushed=False)
    return message_id, new_pts


def bot_edits(world, *, bot_id: int, message_id: int, text: str, buttons) -> int:
    """The bot edits its own message (text and buttons); the pts the edit took."""
    with world.transaction() as conn:
        row = message(world, bot_id, message_id)
        conn.execute(
            "UPDATE bot_messages SET text = ?, buttons = ? WHERE bot_id = ? AND id = ?",
            (text, json.dumps(buttons) if buttons else None, bot_id, message_id),
        )
        return _log(conn, bot_id=bot_id, kind="edit", user_id=row["user_id"], message_id=message_id, pushed=False)


def message(world, bot_id: int, message_id: int) -> dict | None:
    row = world.conn.execute("SELECT * FROM bot_messages WHERE bot_id = ? AND id = ?", (bot_id, message_id)).fetchone()
    return None if row is None else dict(row)


def callback(world, query_id: int) -> dict | None:
    row = world.conn.execute("SELECT * FROM bot_callbacks WHERE query_id = ?", (query_id,)).fetchone()
    return None if row is None else dict(row)


def callback_answer(world, *, query_id: int, text: str) -> None:
    with world.transaction() as conn:
        conn.execute("UPDATE bot_callbacks SET answered = 1, answer = ? WHERE query_id = ?", (text, query_id))


def pushes(world, bot_id: int, *, after_seq: int) -> list[dict]:
    """What a person did since `after_seq`, for the bot's live connections, in order."""
    rows = world.conn.execute(
        "SELECT * FROM bot_updates WHERE bot_id = ? AND seq > ? AND pushed ORDER BY seq", (bot_id, after_seq)
    )
    return [dict(row) for row in rows]


def difference(world, bot_id: int, *, after_pts: int) -> list[dict]:
    """The bot's new and edited messages after `after_pts` (updates.getDifference)."""
    rows = world.conn.execute(
        "SELECT * FROM bot_updates WHERE bot_id = ? AND pts > ? ORDER BY pts", (bot_id, after_pts)
    )
    return [dict(row) for row in rows]


def conversations(world, user_id: int) -> list[dict]:
    """A person's private chats with the bots (`sandbox_dump USER_ID`): each message's text, buttons (rows of
    their texts) and document name."""
    found = []
    for row in world.conn.execute(
        "SELECT DISTINCT bots.id, bots.username FROM bots JOIN bot_messages ON bot_messages.bot_id = bots.id"
        " WHERE bot_messages.user_id = ? ORDER BY bots.id",
        (user_id,),
    ).fetchall():
        messages = []
        for item in world.conn.execute(
            "SELECT * FROM bot_messages WHERE bot_id = ? AND user_id = ? ORDER BY id", (row["id"], user_id)
        ).fetchall():
            document = world.document(item["document_id"]) if item["document_id"] is not None else None
            messages.append(
                {
                    "id": item["id"],
                    "from": "bot" if item["from_bot"] else "person",
                    "date": store.iso_date(item["date"]),
                    "text": item["text"],
                    "buttons": [[b["text"] for b in line] for line in json.loads(item["buttons"] or "[]")],
                    "document": document["name"] if document else None,
                }
            )
        found.append({"bot": f"@{row['username']}", "bot_id": row["id"], "messages": messages})
    return found
