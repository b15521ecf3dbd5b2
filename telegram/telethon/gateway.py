"""The real gateway: Telethon 1.45 over MTProto, one client per account per task.

Ids are Telegram's own: a channel or supergroup is its positive `channel_id` (not the -100… "marked"
form of Bot API and `telethon.utils.get_peer_id`), a basic group its positive `chat_id`, a person (a private
chat) their `user_id`; `ChatRef.type` says which input peer to build (peers.py). Chats are addressed by stored
(id, access_hash), never resolved by name.

One adapter of the TelegramGateway protocol, its calls grouped by job in modules of their own, each call with
its error mapping (errors.py), all on one connection to Telegram (connection.py).
"""

from telegram.telethon.chats import ChatCalls
from telegram.telethon.connection import GatewayConnection
from telegram.telethon.files import TransferCalls
from telegram.telethon.login import LoginCalls
from telegram.telethon.reading import ReadingCalls
from telegram.telethon.writing import WritingCalls


class TelethonGateway(LoginCalls, ChatCalls, ReadingCalls, TransferCalls, WritingCalls, GatewayConnection):
    """The calls call one another across modules (an upload asks get_me for the account's limit and posts with
    the writing calls' _send; a copy with a new caption reads the message fresh with get_messages)."""
