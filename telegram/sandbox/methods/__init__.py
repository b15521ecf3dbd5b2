"""The Telegram methods the sandbox server answers, by Telethon request class."""

from telegram.sandbox.methods import editing, files, joining, login, reading, writing

HANDLERS = login.HANDLERS | reading.HANDLERS | files.HANDLERS | writing.HANDLERS | joining.HANDLERS | editing.HANDLERS
