"""Telegram: which client talks to it, how files are transferred, and one process per account at a time."""

from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from config.env import envint, envstr, var_dir
from config.settings.environment import BASE_DIR, PROCESS

TELEGRAM_API_ID = envint("TELEGRAM_API_ID", 0)
TELEGRAM_API_HASH = envstr("TELEGRAM_API_HASH", "")
TELEGRAM_BACKEND = envstr("TELEGRAM_BACKEND", "telethon" if TELEGRAM_API_ID and TELEGRAM_API_HASH else "sandbox")
if TELEGRAM_BACKEND not in {"telethon", "sandbox"}:
    raise ImproperlyConfigured(f"TELEGRAM_BACKEND={TELEGRAM_BACKEND!r}; use telethon or sandbox.")
# Beat and Flower never talk to Telegram and are not given the API hash (docs/security.md).
if TELEGRAM_BACKEND == "telethon" and not (TELEGRAM_API_ID and TELEGRAM_API_HASH) and PROCESS not in ("beat", "flower"):
    raise ImproperlyConfigured("TELEGRAM_BACKEND=telethon needs TELEGRAM_API_ID and TELEGRAM_API_HASH.")
SANDBOX_PATH = Path(envstr("SANDBOX_PATH", str(var_dir(BASE_DIR) / "sandbox")))
# File transfers (docs/operations.md, "Transfer speed"): parts of one file requested at once (1 = one at a
# time), the connections an account opens to a file's data centre for them, and the parts in flight of all
# the account's transfers together (a download and an upload may overlap).
TRANSFER_PARTS_IN_FLIGHT = envint("TRANSFER_PARTS_IN_FLIGHT", 8, minimum=1)
TRANSFER_CONNECTIONS = envint("TRANSFER_CONNECTIONS", 4, minimum=1)
TRANSFER_ACCOUNT_PARTS_IN_FLIGHT = envint("TRANSFER_ACCOUNT_PARTS_IN_FLIGHT", 16, minimum=1)
# One process at a time talks to Telegram as an account (core/leases.py): how long an opener waits for the
# session, how long an ingestion cycle waits to get it back after handing it over, how long fan-out waits.
TELEGRAM_SESSION_WAIT_SECONDS = envint("TELEGRAM_SESSION_WAIT_SECONDS", 30, minimum=0)
INGEST_SESSION_HANDOVER_WAIT_SECONDS = envint("INGEST_SESSION_HANDOVER_WAIT_SECONDS", 120, minimum=0)
REMINDER_SESSION_WAIT_SECONDS = envint("REMINDER_SESSION_WAIT_SECONDS", 600, minimum=0)
# The members' bot (packages/bot/): a token from BotFather, used when the console has none; the Bot API's
# limits the bot keeps under (docs/decisions/0122-*.md); how often it looks for packages to tell
# subscribers about.
TELEGRAM_BOT_TOKEN = envstr("TELEGRAM_BOT_TOKEN", "")
BOT_SENDS_PER_SECOND = envint("BOT_SENDS_PER_SECOND", 25, minimum=1)
BOT_PERSON_SECONDS_BETWEEN_SENDS = envint("BOT_PERSON_SECONDS_BETWEEN_SENDS", 1, minimum=0)
BOT_NOTICE_SECONDS = envint("BOT_NOTICE_SECONDS", 30, minimum=1)
# How long the bot trusts a membership check ("Members of chosen chats") before asking Telegram again.
BOT_MEMBERSHIP_SECONDS = envint("BOT_MEMBERSHIP_SECONDS", 600, minimum=0)
