"""The Telegram methods the sandbox server answers, by Telethon request class."""

from telegram.sandbox.methods import bots, files, joining, login, reading, writing

HANDLERS = login.HANDLERS | reading.HANDLERS | files.HANDLERS | writing.HANDLERS | joining.HANDLERS | bots.HANDLERS
