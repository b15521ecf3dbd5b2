"""The Telegram methods the sandbox server answers, by Telethon request class."""

from telegram.sandbox.methods import bots, editing, files, joining, login, reading, writing

ACCOUNT_HANDLERS = (
    login.HANDLERS | reading.HANDLERS | files.HANDLERS | writing.HANDLERS | joining.HANDLERS | editing.HANDLERS
)
# A bot's key is answered by the bots' methods where they differ (bots.py); an account's never sees them.
HANDLERS = ACCOUNT_HANDLERS | bots.handlers(ACCOUNT_HANDLERS)
