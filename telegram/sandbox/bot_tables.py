"""The world's tables for bots (telegram/sandbox/bots.py), apart: the world's schema (world_parts/base.py)
takes them in."""

SCHEMA = (
    """CREATE TABLE bots (
        id INTEGER PRIMARY KEY, username TEXT NOT NULL, token TEXT NOT NULL UNIQUE, name TEXT NOT NULL)""",
    # One private chat per (bot, person); ids count per bot. buttons: [[{"text", "data" (hex) | "url"}]]
    """CREATE TABLE bot_messages (
        bot_id INTEGER NOT NULL, id INTEGER NOT NULL, user_id INTEGER NOT NULL, from_bot INTEGER NOT NULL,
        date REAL NOT NULL, text TEXT NOT NULL, buttons TEXT, kind TEXT, document_id INTEGER,
        PRIMARY KEY (bot_id, id))""",
    """CREATE TABLE bot_updates (
        seq INTEGER PRIMARY KEY, bot_id INTEGER NOT NULL, pts INTEGER, kind TEXT NOT NULL, user_id INTEGER NOT NULL,
        message_id INTEGER NOT NULL, query_id INTEGER, data BLOB, pushed INTEGER NOT NULL)""",
    """CREATE TABLE bot_callbacks (
        query_id INTEGER PRIMARY KEY, bot_id INTEGER NOT NULL, user_id INTEGER NOT NULL, message_id INTEGER NOT NULL,
        data BLOB NOT NULL, answered INTEGER NOT NULL DEFAULT 0, answer TEXT)""",
    # Where each logged-in key's pushes begin: what people did after the login.
    "CREATE TABLE bot_sessions (key_id TEXT PRIMARY KEY, bot_id INTEGER NOT NULL, after_seq INTEGER NOT NULL)",
    # People (chats of type user) in channels and supergroups (a chat's `people`): what channels.getParticipant reads.
    """CREATE TABLE chat_people (
        chat_id INTEGER NOT NULL, user_id INTEGER NOT NULL, date REAL NOT NULL, PRIMARY KEY (chat_id, user_id))""",
)
TABLES = ("bots", "bot_messages", "bot_updates", "bot_callbacks", "bot_sessions", "chat_people")
