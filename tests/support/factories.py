"""Ready-made rows for tests that do not need a whole sandbox world."""

import itertools

from accounts.models import AccountChat, AuthState, Chat, TelegramAccount
from ingestion.models import Channel

_ids = itertools.count(5000)


def account(phone: str = "", **fields) -> TelegramAccount:
    defaults = {"auth_state": AuthState.AUTHENTICATED, "display_name": "Reader"}
    return TelegramAccount.objects.create(phone=phone or f"+1555{next(_ids):07d}", **{**defaults, **fields})


def channel(title: str = "Models A", *, member: TelegramAccount | None = None, **fields) -> Channel:
    chat = Chat.objects.create(telegram_id=next(_ids), title=title, type=fields.pop("type", "channel"))
    if member is not None:
        AccountChat.objects.create(account=member, chat=chat, access_hash=1)
    return Channel.objects.create(chat=chat, **fields)


def work_queued(callbacks: list) -> list:
    """The on-commit callbacks that queue work: the audit trail's own records (core.audit) left out."""
    return [callback for callback in callbacks if callback.__module__ != "core.audit"]
