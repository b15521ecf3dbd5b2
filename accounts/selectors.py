"""Reads of Telegram accounts for pages and the API."""

from django.db.models import Count, QuerySet

from accounts.models import ChatTopic, TelegramAccount


def account_list(*, auth_state: str | None = None, is_premium: bool | None = None) -> QuerySet[TelegramAccount]:
    """Accounts with `chats_known` (how many chats the last refresh stored)."""
    accounts = TelegramAccount.objects.annotate(chats_known=Count("chat_links")).order_by("phone")
    if auth_state:
        accounts = accounts.filter(auth_state=auth_state)
    if is_premium is not None:
        accounts = accounts.filter(is_premium=is_premium)
    return accounts


def account_get(*, pk: int) -> TelegramAccount:
    """One account with `chats_known`; raises TelegramAccount.DoesNotExist."""
    return account_list().get(pk=pk)


def chat_topics(*, chat_ids) -> dict[int, list[ChatTopic]]:
    """The known topics of these chats (General not among them), by chat pk, each list by title."""
    topics: dict[int, list[ChatTopic]] = {}
    for topic in ChatTopic.objects.filter(chat_id__in=list(chat_ids)).order_by("title", "topic_id"):
        topics.setdefault(topic.chat_id, []).append(topic)
    return topics
