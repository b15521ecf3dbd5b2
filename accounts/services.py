"""Telegram accounts: login (code, then 2FA password when asked), premium, chats."""

import asyncio
import logging
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import ProtectedError
from django.utils import timezone
from django.views.decorators.debug import sensitive_variables

from accounts.models import AccountChat, AuthState, Chat, ChatTopic, TelegramAccount, phone_validator
from accounts.sessions import account_gateway, account_mark_unusable
from accounts.signals import chats_refreshed
from core.crypto import SealBroken, reseal, seal, sealed_with_newest_key, unseal
from core.errors import OperatorError
from core.notifications import notifications_resolve
from telegram.errors import (
    AccountRestricted,
    AuthRequired,
    NotFound,
    PasswordRequired,
    TargetForbidden,
    TelegramError,
)
from telegram.gateway import TelegramGateway
from telegram.records import GENERAL_TOPIC_ID, TOPICS_PAGE, USER, AccountInfo, ChatInfo, TopicInfo

logger = logging.getLogger(__name__)

T = TypeVar("T")


class LoginStepError(OperatorError):
    """A login step was asked for out of order; the message says what to do."""


# What these services raise for the operator to act on; pages and the API show the message, never a 500.
OPERATOR_ERRORS = (TelegramError, LoginStepError, ValidationError, SealBroken)


def gateway_call(*, account: TelegramAccount, action: Callable[[TelegramGateway], Awaitable[T]]) -> tuple[T, str]:
    """Run one async gateway action in its own event loop; returns (result, session).

    No ORM inside: the action only talks to Telegram.
    """

    async def _run():
        async with account_gateway(account=account) as gateway:
            result = await action(gateway)
            return result, gateway.export_session()

    return asyncio.run(_run())


def account_create(*, phone: str) -> TelegramAccount:
    phone = "".join(phone.split()).replace("-", "")
    if phone and not phone.startswith("+"):
        phone = f"+{phone}"
    phone_validator(phone)
    if TelegramAccount.objects.filter(phone=phone).exists():
        raise ValidationError({"phone": f"An account with phone {phone} already exists."})
    return TelegramAccount.objects.create(phone=phone)


def account_add(*, phone: str) -> TelegramAccount:
    """Create the account and ask Telegram for its login code, as the operator's "Add account" does.

    When Telegram refuses (bad number, flood wait), no half-added account is left behind.
    """
    account = account_create(phone=phone)
    try:
        return account_send_code(account=account)
    except Exception:
        account.delete()
        raise


@sensitive_variables("session")
def account_send_code(*, account: TelegramAccount) -> TelegramAccount:
    if account.auth_state == AuthState.AUTHENTICATED:
        raise LoginStepError(f"{account.phone} is already logged in.")
    phone_code_hash, session = gateway_call(account=account, action=lambda gateway: gateway.send_code())
    account.login_code_hash = phone_code_hash
    account.session_sealed = seal(session)
    account.auth_state = AuthState.AWAITING_CODE
    account.last_error = ""
    account.save(update_fields=["login_code_hash", "session_sealed", "auth_state", "last_error"])
    return account


# Error reports (DEBUG off) show these locals as stars, here and in every frame this calls.
@sensitive_variables("password", "code", "session")
def account_sign_in(*, account: TelegramAccount, code: str = "", password: str = "") -> TelegramAccount:
    """Complete the code step or the 2FA step; a wrong code or password raises a LoginError.

    The password is used for this call only and never stored.
    """
    code, password = code.strip(), password
    if bool(code) == bool(password):
        raise LoginStepError("Send either the login code or the two-step verification password.")
    if code:
        if account.auth_state != AuthState.AWAITING_CODE:
            raise LoginStepError(f"No code was requested for {account.phone}; send the code first.")
        try:
            info, session = gateway_call(
                account=account,
                action=lambda gateway: gateway.sign_in_code(code=code, phone_code_hash=account.login_code_hash),
            )
        except PasswordRequired:
            account.auth_state = AuthState.AWAITING_PASSWORD
            account.save(update_fields=["auth_state"])
            return account
    else:
        if account.auth_state != AuthState.AWAITING_PASSWORD:
            raise LoginStepError(f"{account.phone} is not waiting for a two-step verification password.")
        info, session = gateway_call(
            account=account, action=lambda gateway: gateway.sign_in_password(password=password)
        )
    return account_store_login(account=account, info=info, session=session)


@sensitive_variables("session")
def account_store_login(*, account: TelegramAccount, info: AccountInfo, session: str) -> TelegramAccount:
    account.session_sealed = seal(session)
    account.login_code_hash = ""
    account.auth_state = AuthState.AUTHENTICATED
    account.last_error = ""
    _apply_info(account, info)
    account.save()
    # Logged in again: "needs a new login" / "restricted" about it no longer needs anyone.
    notifications_resolve(subject=account.notification_subject)
    return account


def _apply_info(account: TelegramAccount, info: AccountInfo) -> None:
    account.telegram_user_id = info.user_id
    account.display_name = info.display_name
    account.username = info.username
    account.is_premium = info.premium
    account.upload_limit_bytes = info.upload_max_bytes
    account.last_seen_at = timezone.now()


async def _chats_and_topics(gateway: TelegramGateway) -> tuple[list[ChatInfo], dict[int, list[TopicInfo]]]:
    """The account's chats, and the topics of each forum it can post in (TOPICS_PAGE a request)."""
    chats = await gateway.list_chats()
    topics = {}
    for info in chats:
        if not (info.forum and info.can_post):
            continue
        listed, offset = [], 0
        try:
            while True:
                page = await gateway.list_topics(info.ref, offset_topic_id=offset)
                listed.extend(page)
                if len(page) < TOPICS_PAGE:
                    break
                offset = page[-1].id
        except (TargetForbidden, NotFound):
            continue  # its topics stay unknown; the chat itself is still stored
        topics[info.id] = listed
    return chats, topics


def _topics_store(chat: Chat, topics: list[TopicInfo]) -> None:
    named = {topic.id: topic.title for topic in topics if topic.id != GENERAL_TOPIC_ID}
    ChatTopic.objects.filter(chat=chat).exclude(topic_id__in=named).delete()
    for topic_id, title in named.items():
        ChatTopic.objects.update_or_create(chat=chat, topic_id=topic_id, defaults={"title": title[:255]})


@dataclass(frozen=True)
class ChatsFound:
    chats: int  # channels and groups
    people: int  # people with a private chat


def account_refresh_chats(*, account: TelegramAccount) -> ChatsFound:
    """Store the channels and groups this account is in, the people it has a private chat with, and the topics
    of the forums it can post in."""
    chats, topics = account_gateway_call(account=account, action=_chats_and_topics)
    now = timezone.now()
    with transaction.atomic():
        seen, people = [], 0
        for info in chats:
            chat = account_chat_store(account=account, info=info, now=now)
            if chat is None:
                continue
            people += info.type == USER
            if info.id in topics:
                _topics_store(chat, topics[info.id])
            seen.append(chat.pk)
        AccountChat.objects.filter(account=account).exclude(chat_id__in=seen).delete()
        account.chats_refreshed_at = now
        account.save(update_fields=["chats_refreshed_at"])
        chats_refreshed.send(sender=TelegramAccount, account=account)
    return ChatsFound(chats=len(seen) - people, people=people)


def account_chat_store(*, account: TelegramAccount, info: ChatInfo, now=None, invite_hash: str = "") -> Chat | None:
    """Store a chat the account is in, and what the account knows of it (its access hash, whether it may post)."""
    now = now or timezone.now()
    known = Chat.objects.filter(telegram_id=info.id).only("type").first()
    if known is not None and (known.type == USER) != (info.type == USER):
        # Telegram numbers people and chats apart, so the two may share an id: the one known first (a source
        # or a reminder target perhaps) is kept, never turned into the other.
        logger.warning("%s: %s has the id of a known chat (%s); not stored", account, info.title, info.id)
        return None
    fields = {
        "title": info.title,
        "type": info.type,
        "username": info.username,
        "is_forum": info.forum,
        "slow_mode_seconds": info.slow_mode_seconds,
        "updated_at": now,
    }
    if info.members_count is not None:  # Telegram does not always say: the last count known is kept
        fields["members_count"] = info.members_count
    chat, _ = Chat.objects.update_or_create(
        telegram_id=info.id, defaults=fields | ({"invite_hash": invite_hash} if invite_hash else {})
    )
    AccountChat.objects.update_or_create(
        account=account,
        chat=chat,
        defaults={"access_hash": info.access_hash, "can_post": info.can_post, "seen_at": now},
    )
    return chat


def account_chat_forget(*, account: TelegramAccount, chat: Chat) -> None:
    """The account is no longer in the chat (it left)."""
    AccountChat.objects.filter(account=account, chat=chat).delete()


def account_gateway_call(*, account: TelegramAccount, action: Callable[[TelegramGateway], Awaitable[T]]) -> T:
    """A call on a logged-in account; an expired or restricted session is recorded."""
    if account.auth_state != AuthState.AUTHENTICATED:
        raise LoginStepError(f"{account.phone} is not logged in ({account.get_auth_state_display()}).")
    try:
        result, _ = gateway_call(account=account, action=action)
    except (AuthRequired, AccountRestricted) as exc:
        account_mark_unusable(account=account, error=exc)
        raise
    return result


class AccountHasHistory(OperatorError):
    """The account's reminders and runs are history: it can be switched off, not deleted."""


def account_delete(*, account: TelegramAccount) -> None:
    """Delete an account that never did anything: its session and chat list go with it.

    Reminders, reminder runs and ingestion runs protect their account (the foreign keys are PROTECT), so
    history is never lost by a cascade; such an account is switched off instead (account_set_active).
    """
    try:
        with transaction.atomic():
            account.delete()
    except ProtectedError as exc:
        counts = Counter(obj._meta.verbose_name_plural for obj in exc.protected_objects)
        history = ", ".join(f"{count} {name}" for name, count in sorted(counts.items()))
        raise AccountHasHistory(
            f"{account} has history ({history}), so it cannot be deleted. Switch it off instead: it stops "
            "sending and ingesting, and its history stays."
        ) from None


def account_set_active(*, account: TelegramAccount, active: bool) -> TelegramAccount:
    """Switched off, an account is left out of ingestion cycles and its reminder runs fail with the reason."""
    account.is_active = active
    account.save(update_fields=["is_active"])
    return account


@dataclass(frozen=True)
class ResealReport:
    resealed: int  # sessions re-encrypted with the newest key
    were_older: int  # of those, how many an older key had sealed
    without_session: int


def account_sessions_reseal() -> ResealReport:
    """Re-encrypt every stored session with the newest key (key rotation), all or nothing.

    Refuses, changing nothing, when a session opens with none of the configured keys: removing its key
    would lose it for good.
    """
    with transaction.atomic():
        accounts = list(TelegramAccount.objects.select_for_update().order_by("pk"))
        sealed = [account for account in accounts if account.session_sealed]
        broken = []
        for account in sealed:
            try:
                unseal(account.session_sealed)
            except SealBroken:
                broken.append(account.phone)
        if broken:
            raise SealBroken(
                f"{len(broken)} session(s) open with none of the keys in STASHCAST_SESSION_KEYS: {', '.join(broken)}. "
                "Nothing was re-encrypted. Put back the key that sealed them (anywhere after the newest), "
                "or log those accounts in again (or delete them), then run this again."
            )
        were_older = 0
        for account in sealed:
            were_older += not sealed_with_newest_key(account.session_sealed)
            account.session_sealed = reseal(account.session_sealed)
        TelegramAccount.objects.bulk_update(sealed, ["session_sealed"], batch_size=500)
    return ResealReport(resealed=len(sealed), were_older=were_older, without_session=len(accounts) - len(sealed))
