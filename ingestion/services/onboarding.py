"""Onboarding from the console: an account joins a channel (by @username or invite link, previewed first) or
leaves one, creates the destination channel with its writers, or joins every channel the other accounts read.

Each step is one or a few Telegram requests made while the operator waits; what Telegram refuses comes back in
the operator's words (a link that leads nowhere is bad input: a ValidationError on `link`)."""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction

from accounts.models import AccountChat, AuthState, TelegramAccount
from accounts.services import (
    account_chat_forget,
    account_chat_store,
    account_gateway_call,
    account_refresh_chats,
)
from ingestion.models import AccountChannelMap, Channel, MapRole
from ingestion.selectors import SOURCE_CHAT_TYPES
from ingestion.services.channels import channel_for_chat, channel_link_account, destination_set
from telegram.errors import AccountRestricted, AuthRequired, FloodWait, LimitReached, NotFound, TelegramError
from telegram.links import ChatLinkInvalid, chat_link_parse
from telegram.records import ALREADY_MEMBER, JOINED, REQUESTED, ChatLink, ChatPreview

TITLE_MAX = 128  # Telegram's limit on a channel's title
ABOUT_MAX = 255
FAILED = "failed"
NOT_TRIED = "not_tried"
STATUS_WORDS = {
    JOINED: "Joined",
    ALREADY_MEMBER: "Already a member",
    REQUESTED: "Join request sent: the chat's admins must approve it",
    FAILED: "Failed",
    NOT_TRIED: "Not tried",
}


@dataclass(frozen=True)
class JoinOutcome:
    """What one join came to, for one account and one chat."""

    title: str  # the chat's, or the link when the chat is not known
    status: str  # JOINED, ALREADY_MEMBER, REQUESTED, FAILED or NOT_TRIED
    message: str = ""  # the refusal in the operator's words
    channel: Channel | None = None

    @property
    def status_label(self) -> str:
        return STATUS_WORDS[self.status]

    @property
    def ok(self) -> bool:
        return self.status in (JOINED, ALREADY_MEMBER, REQUESTED)


def _sentence(error: Exception) -> str:
    text = str(error)
    return text if text.endswith(".") else f"{text}."


def _link(text: str) -> ChatLink:
    try:
        return chat_link_parse(text)
    except ChatLinkInvalid as exc:
        raise ValidationError({"link": _sentence(exc)}) from None


def _logged_in(account: TelegramAccount) -> None:
    if account.auth_state != AuthState.AUTHENTICATED:
        raise ValidationError({"account": f"{account} is not logged in; log it in on the Accounts page first."})


def chat_preview(*, account: TelegramAccount, link: str) -> ChatPreview:
    """What Telegram tells this account about a chat before it joins."""
    _logged_in(account)
    parsed = _link(link)
    try:
        return account_gateway_call(account=account, action=lambda gateway: gateway.preview_chat(parsed))
    except NotFound as exc:
        raise ValidationError({"link": _sentence(exc)}) from None


def channel_join(*, account: TelegramAccount, link: str) -> JoinOutcome:
    """Join a chat and store it; a channel or supergroup becomes a Channel this account reads (its scanning is
    still switched on by the operator). Telegram's refusals are raised; a link that leads nowhere is a
    ValidationError on `link`."""
    _logged_in(account)
    parsed = _link(link)
    try:
        result = account_gateway_call(account=account, action=lambda gateway: gateway.join_chat(parsed))
    except NotFound as exc:
        raise ValidationError({"link": _sentence(exc)}) from None
    if result.chat is None:
        return JoinOutcome(title=str(parsed), status=result.status)
    with transaction.atomic():
        chat = account_chat_store(account=account, info=result.chat, invite_hash=parsed.invite_hash)
        channel = None
        if chat is not None and chat.type in SOURCE_CHAT_TYPES:
            channel = channel_for_chat(chat=chat)
            if not channel.is_destination:
                channel_link_account(channel=channel, account=account, role=MapRole.READER)
    return JoinOutcome(title=result.chat.title, status=result.status, channel=channel)


def channel_leave(*, channel: Channel, account: TelegramAccount) -> bool:
    """The account leaves the channel on Telegram and stops reading (or writing) it here; False when it was not
    in it on Telegram any more (it is forgotten here all the same)."""
    _logged_in(account)
    link = AccountChat.objects.filter(account=account, chat=channel.chat).first()
    if link is None:
        raise ValidationError({"account": f"{account} is not in {channel.title}."})
    if (
        channel.is_destination
        and AccountChannelMap.objects.filter(channel=channel, account=account, role=MapRole.WRITER).exists()
    ):
        raise ValidationError(
            {"account": f"{account} uploads to {channel.title}, the destination; choose other writers first."}
        )
    chat_ref = link.ref  # read here: no ORM inside the gateway's event loop
    left = account_gateway_call(account=account, action=lambda gateway: gateway.leave_chat(chat_ref))
    with transaction.atomic():
        AccountChannelMap.objects.filter(channel=channel, account=account).delete()
        account_chat_forget(account=account, chat=channel.chat)
    return left


@dataclass(frozen=True)
class DestinationCreated:
    channel: Channel
    writers: list[tuple[TelegramAccount, str]]  # each writer asked for, and why it could not be added ("" if it was)


def destination_create(
    *, account: TelegramAccount, title: str, writers: list[TelegramAccount], about: str = ""
) -> DestinationCreated:
    """A new broadcast channel owned by `account` becomes the destination; each writer is added as an admin who
    posts and reads it from then on. A writer Telegram refuses is reported, the others go on."""
    _logged_in(account)
    title, about = title.strip(), about.strip()
    if not title:
        raise ValidationError({"title": "Give the new channel a title."})
    if len(title) > TITLE_MAX:
        raise ValidationError({"title": f"Keep the title within {TITLE_MAX} characters."})
    if len(about) > ABOUT_MAX:
        raise ValidationError({"about": f"Keep the description within {ABOUT_MAX} characters."})
    writers = [writer for writer in writers if writer.pk != account.pk]
    for writer in writers:
        _logged_in(writer)
    info = account_gateway_call(
        account=account, action=lambda gateway: gateway.create_channel(title=title, about=about)
    )
    chat = account_chat_store(account=account, info=info)
    outcomes, added = [], [account]
    for writer in writers:
        try:
            account_gateway_call(
                account=account,
                action=lambda gateway, phone=writer.phone: gateway.add_channel_writer(info.ref, phone=phone),
            )
            account_refresh_chats(account=writer)  # the writer's own access hash to the new channel
        except TelegramError as exc:
            outcomes.append((writer, _sentence(exc)))
            continue
        outcomes.append((writer, ""))
        added.append(writer)
    channel = destination_set(channel=channel_for_chat(chat=chat), writers=added)
    return DestinationCreated(channel=channel, writers=outcomes)


def _join_link(channel: Channel) -> str:
    """How another account can join it: its public @username, or the invite link an account joined by."""
    if channel.chat.username:
        return f"@{channel.chat.username}"
    return f"t.me/+{channel.chat.invite_hash}" if channel.chat.invite_hash else ""


# Refusals about the account, not the channel: the channels after it are left for later.
ACCOUNT_WIDE = (FloodWait, AuthRequired, AccountRestricted, LimitReached)


def account_join_sources(*, account: TelegramAccount) -> list[JoinOutcome]:
    """Make the account join every active source channel the other accounts read, one after another, each
    outcome reported. A channel with no public @username and no invite link known here cannot be joined: it says
    so. After a refusal about the account itself (a FloodWait, too many channels) the rest are left for later."""
    _logged_in(account)
    channels = (
        Channel.objects.filter(is_active=True, maps__role=MapRole.READER)
        .exclude(maps__account=account)
        .select_related("chat")
        .distinct()
        .order_by("chat__title")
    )
    outcomes, stopped = [], ""
    for channel in channels:
        link = _join_link(channel)
        if stopped:
            outcome = JoinOutcome(title=channel.title, status=NOT_TRIED, message=stopped)
        elif not link:
            message = "It has no public @username and no invite link is known here: join it with its invite link."
            outcome = JoinOutcome(title=channel.title, status=FAILED, message=message)
        else:
            try:
                outcome = channel_join(account=account, link=link)
            except ACCOUNT_WIDE as exc:
                stopped = f"Left for later: {_sentence(exc)}"
                outcome = JoinOutcome(title=channel.title, status=FAILED, message=_sentence(exc))
            except TelegramError as exc:
                outcome = JoinOutcome(title=channel.title, status=FAILED, message=_sentence(exc))
            except ValidationError as exc:
                outcome = JoinOutcome(title=channel.title, status=FAILED, message=" ".join(exc.messages))
        outcomes.append(
            JoinOutcome(title=channel.title, status=outcome.status, message=outcome.message, channel=channel)
        )
    return outcomes
