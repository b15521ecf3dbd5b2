"""The bot's rules and records: who may use it, the daily limit, one delivery per (person, package), every send
recorded, subscriptions told once. Plain ORM functions; the bot process (runner.py) calls them off its loop."""

from dataclasses import dataclass
from datetime import timedelta

from cryptography.fernet import InvalidToken
from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from accounts.models import AccountChat, AuthState, Chat
from accounts.services import account_gateway_call
from core.crypto import SealBroken, reseal, seal, unseal
from core.errors import OperatorError
from core.formatting import format_moment
from packages.models import (
    BotActivity,
    BotAudience,
    BotDelivery,
    BotDeliveryState,
    BotNotice,
    BotPerson,
    BotSettings,
    BotSubscription,
    Collection,
    Package,
)
from packages.selectors import collection_packages, package_search
from packages.sending import package_send_captions
from telegram.records import CAPTION_MAX, ChatRef, utf16_units

SUBSCRIPTIONS_MAX = 20  # per person
NOTICE_PACKAGES_MAX = 50  # packages one tick tells a subscription about (more wait for the next)
SEARCH_COUNTED = 1000  # matches a search counts; past it the bot says "more than 1000"
SENDS_PER_DAY_MAX = 1000
MEMBER_CHATS_MISSING = "Choose at least one chat whose members may use the bot."


def bot_settings_get() -> BotSettings:
    return BotSettings.objects.get_or_create(pk=1)[0]


def bot_settings_lock() -> BotSettings:
    """The settings row, locked to the end of the caller's transaction: a change of some fields (the API's PATCH)
    reads what another change just wrote rather than writing back what it read before."""
    bot_settings_get()
    return BotSettings.objects.select_for_update().get(pk=1)


def bot_token_problem(*, token: str) -> str:
    """What is wrong with a token as BotFather gives it ('' when nothing): the page and the API say the same."""
    head, _, secret = token.partition(":")
    return "" if head.isdigit() and secret else "A bot token looks like 123456789:AAE…, as BotFather gives it."


def bot_token_source() -> str:
    """Where the bot's token comes from, in the operator's words ('' when there is none); the token itself never."""
    if bot_settings_get().token_sealed:
        return "the console"
    return "TELEGRAM_BOT_TOKEN" if settings.TELEGRAM_BOT_TOKEN else ""


def bot_settings_update(
    *,
    enabled: bool,
    token: str | None,
    audience: str,
    allowed_user_ids: list[int],
    sends_per_day: int,
    member_chats: list[Chat] | None = None,
) -> BotSettings:
    """Save the Bot page: a blank token keeps the one stored (it is never shown back). Other chosen chats make
    every person's membership be asked again."""
    bot = bot_settings_get()
    if member_chats is not None and {c.pk for c in member_chats} != set(bot.member_chats.values_list("pk", flat=True)):
        bot.member_chats.set(member_chats)
        BotPerson.objects.update(member_checked_at=None)
    bot.enabled, bot.audience, bot.allowed_user_ids, bot.sends_per_day = (
        enabled,
        audience,
        allowed_user_ids,
        sends_per_day,
    )
    if token:
        bot.token_sealed, bot.username = seal(token.strip()), ""
        bot.session_sealed, bot.session_bot_id, bot.update_state = "", None, {}  # another bot: its own session
    bot.updated_at = timezone.now()
    bot.save()
    return bot


def bot_secrets_reseal() -> int:
    """Re-encrypt the bot's token and session with the newest key (key rotation); returns how many. Refuses,
    changing nothing, when one opens with no key (the caller's transaction keeps it all or nothing)."""
    bot = BotSettings.objects.select_for_update().filter(pk=1).first()
    if bot is None:
        return 0
    fields = [name for name in ("token_sealed", "session_sealed") if getattr(bot, name)]
    for name in fields:
        try:
            setattr(bot, name, reseal(getattr(bot, name)))
        except (SealBroken, InvalidToken):
            raise SealBroken(
                f"The bot's {name.removesuffix('_sealed')} opens with none of the keys in STASHCAST_SESSION_KEYS. "
                "Nothing was re-encrypted. Put back the key that sealed it (anywhere after the newest), or set the "
                "bot's token again on the Bot page, then run this again."
            ) from None
    bot.save(update_fields=fields)
    return len(fields)


def bot_token() -> str:
    """The token the bot logs in with: the console's, else TELEGRAM_BOT_TOKEN; '' when there is none."""
    bot = bot_settings_get()
    if bot.token_sealed:
        try:
            return unseal(bot.token_sealed)
        except SealBroken:
            return ""
    return settings.TELEGRAM_BOT_TOKEN


@dataclass(frozen=True)
class BotSession:
    """What the bot process resumes with: its sealed session, opened, and its update state at its last stop."""

    session: str
    update_state: dict


def bot_session_get(*, token: str) -> BotSession:
    """The kept session of the bot of `token`; empty (log in with the token) when there is none, it is another
    bot's, or its seal no longer opens (a key removed: logging in anew loses only what was missed)."""
    bot = bot_settings_get()
    if not bot.session_sealed or str(bot.session_bot_id) != token.split(":", 1)[0]:
        return BotSession(session="", update_state={})
    try:
        return BotSession(session=unseal(bot.session_sealed), update_state=bot.update_state)
    except SealBroken:
        return BotSession(session="", update_state={})


def bot_session_keep(*, bot_id: int, session: str, update_state: dict | None = None) -> None:
    """Keep the bot's session (at login) and its update state (at its stop)."""
    fields = {"session_sealed": seal(session), "session_bot_id": bot_id}
    if update_state is not None:
        fields["update_state"] = update_state
    BotSettings.objects.filter(pk=1).update(**fields)


def bot_message_claim(*, user_id: int, message_id: int) -> bool:
    """Take up a person's message once: False when it (or a later one) was taken up already, as a message caught
    up again after a crash is (its update state was not kept)."""
    return (
        BotPerson.objects.filter(user_id=user_id, last_message_id__lt=message_id).update(last_message_id=message_id)
        == 1
    )


def bot_username_set(*, username: str) -> None:
    BotSettings.objects.filter(pk=1).update(username=username)


def bot_admin_choices() -> list[Chat]:
    """Channels a logged-in account may post in: where an operator can make the bot an admin."""
    links = AccountChat.objects.filter(can_post=True, account__auth_state=AuthState.AUTHENTICATED)
    return list(Chat.objects.filter(type="channel", account_links__in=links).distinct().order_by("title"))


def bot_make_admin(*, chat_id: int) -> str:
    """Make the bot an admin of a channel (the archive channel: it reads the files it sends there), by a logged-in
    account that posts there; what happened, in words. OperatorError when it cannot be done."""
    bot = bot_settings_get()
    if not bot.username:
        raise OperatorError("Turn the bot on first: it learns its @username when it starts.")
    link = (
        AccountChat.objects.select_related("account", "chat")
        .filter(chat_id=chat_id, can_post=True, account__auth_state=AuthState.AUTHENTICATED)
        .first()
    )
    if link is None:
        raise OperatorError("No logged-in account posts in that channel; choose one an account administers.")
    chat = link.chat
    account_gateway_call(
        account=link.account,
        action=lambda gateway: gateway.add_channel_bot(
            ChatRef(id=chat.telegram_id, access_hash=link.access_hash, type=chat.type), username=bot.username
        ),
    )
    bot_activity_add(person=None, kind="admin", text=f"@{bot.username} made an admin of {chat.title}")
    return f"@{bot.username} is now an admin of {chat.title}, by {link.account.phone}."


def bot_member_chat_choices() -> list[Chat]:
    """Channels and supergroups the accounts are in: the chats whose members may use the bot."""
    chats = Chat.objects.filter(type__in=("channel", "supergroup"), account_links__isnull=False)
    return list(chats.distinct().order_by("title"))


def bot_membership_due(*, person: BotPerson) -> list[Chat]:
    """The chosen chats to ask Telegram about this person now; none when the bot is not for members of chosen
    chats or the last answer is younger than BOT_MEMBERSHIP_SECONDS."""
    bot = bot_settings_get()
    if not bot.enabled or person.blocked or bot.audience != BotAudience.MEMBERS:
        return []
    fresh_since = timezone.now() - timedelta(seconds=settings.BOT_MEMBERSHIP_SECONDS)
    if person.member_checked_at is not None and person.member_checked_at > fresh_since:
        return []
    return list(bot.member_chats.order_by("title"))


def bot_membership_record(*, person: BotPerson, chat: Chat | None, answered: bool) -> BotPerson:
    """What the check found: the chat they are in (None: in none). Kept for BOT_MEMBERSHIP_SECONDS only when
    Telegram answered for every chat (`answered`), so a chat the bot could not ask is asked at the next message."""
    person.member_of = chat.title if chat else ""
    person.member_checked_at = timezone.now() if chat or answered else None
    person.save(update_fields=["member_of", "member_checked_at"])
    return person


def bot_person_seen(*, user_id: int, first_name: str, username: str) -> BotPerson:
    person, _ = BotPerson.objects.update_or_create(
        user_id=user_id,
        defaults={"first_name": first_name[:255], "username": username[:100], "last_seen_at": timezone.now()},
    )
    return person


def bot_person_block(*, user_id: int, blocked: bool) -> BotPerson | None:
    """Block or unblock someone who wrote to the bot (saved, not updated in bulk: the audit trail shows it)."""
    person = BotPerson.objects.filter(user_id=user_id).first()
    if person is not None and person.blocked != blocked:
        person.blocked = blocked
        person.save(update_fields=["blocked"])
    return person


def bot_person_get(*, user_id: int) -> BotPerson | None:
    return BotPerson.objects.filter(user_id=user_id).first()


def bot_refusal(*, person: BotPerson, bot: BotSettings | None = None) -> str:
    """Why this person may not use the bot, in words; '' when they may. `bot`: the settings, when read already."""
    bot = bot or bot_settings_get()
    if not bot.enabled:
        return "The archive's bot is resting; try again later."
    if person.blocked:
        return "You can't use this bot."
    if bot.audience == BotAudience.ALLOW_LIST and person.user_id not in bot.allowed_user_ids:
        return f"This bot is for the archive's members. Ask an operator to add you (your id is {person.user_id})."
    if bot.audience == BotAudience.MEMBERS and not person.member_of:
        titles = ", ".join(bot.member_chats.order_by("title").values_list("title", flat=True)) or "chats not chosen yet"
        return f"This bot is for members of {titles}. Join one of them, then write again."
    return ""


def bot_activity_add(*, person: BotPerson | None, kind: str, text: str) -> None:
    BotActivity.objects.create(person=person, kind=kind, text=text[:300])


@dataclass(frozen=True)
class Delivery:
    """A send the bot is to make: the delivery row, and the destination messages to copy, each with the caption
    the person reads under it."""

    id: int
    title: str
    messages: tuple[tuple[ChatRef, int, str], ...]


def _caption_fit(caption: str) -> str:
    """A caption cut to what a bot may send (a bot is never Premium: CAPTION_MAX UTF-16 units), ending in "…"."""
    if utf16_units(caption) <= CAPTION_MAX:
        return caption
    while utf16_units(caption) > CAPTION_MAX - 1:
        caption = caption[: -max(1, (utf16_units(caption) - CAPTION_MAX + 1) // 2)]
    return caption + "…"


def bot_delivery_messages(*, package: Package) -> tuple[tuple[ChatRef, int, str], ...]:
    """What the bot copies to a person: each destination message with the caption the console's Send gives it
    (package_send_captions: the source caption under the first part), never the catalog line."""
    chat = ChatRef(id=package.destination_chat.telegram_id)
    captions = package_send_captions(packages=[package])
    return tuple(
        (chat, mid, _caption_fit(caption)) for mid, caption in zip(package.dest_message_ids, captions, strict=True)
    )


def _sends_today(person: BotPerson) -> int:
    since = timezone.now() - timedelta(days=1)
    return person.deliveries.filter(created_at__gte=since).exclude(state=BotDeliveryState.FAILED).count()


def bot_delivery_claim(*, person: BotPerson, package: Package) -> Delivery | str:
    """The delivery row made before anything goes out (one per person and package), or why nothing is sent."""
    if not package.destination_chat_id or not package.dest_message_ids:
        return f"{package.file_name} is not in the archive channel yet; try again later."
    messages = bot_delivery_messages(package=package)
    with transaction.atomic():
        person = BotPerson.objects.select_for_update().get(pk=person.pk)  # one claim at a time per person
        done = BotDelivery.objects.filter(person=person, package=package).first()
        if done is not None and done.state != BotDeliveryState.FAILED:
            when = format_moment(done.created_at)
            return f"{package.file_name} was already sent to you ({when})."
        limit = bot_settings_get().sends_per_day
        if _sends_today(person) >= limit:
            return f"You have had {limit} packages in the last 24 hours, the most the bot sends; try again tomorrow."
        if done is None:
            try:
                with transaction.atomic():
                    done = BotDelivery.objects.create(person=person, package=package)
            except IntegrityError:
                return f"{package.file_name} is already on its way."
        else:
            done.state, done.error, done.created_at = BotDeliveryState.SENDING, "", timezone.now()
            done.save(update_fields=["state", "error", "created_at"])
    return Delivery(id=done.pk, title=package.file_name, messages=messages)


def bot_delivery_done(*, delivery_id: int, message_ids: list[int], error: str = "") -> None:
    delivery = BotDelivery.objects.select_related("person", "package").get(pk=delivery_id)
    delivery.message_ids = message_ids
    delivery.state = BotDeliveryState.FAILED if error else BotDeliveryState.SENT
    delivery.error = error
    delivery.sent_at = None if error else timezone.now()
    delivery.save(update_fields=["message_ids", "state", "error", "sent_at"])
    what = f"{delivery.package.file_name} to {delivery.person}"
    bot_activity_add(
        person=delivery.person, kind="failed" if error else "sent", text=f"{what}: {error}" if error else what
    )


def bot_collection_packages(*, collection_id: int) -> list[Package]:
    collection = Collection.objects.filter(pk=collection_id).first()
    return collection_packages(collection=collection) if collection else []


@dataclass(frozen=True)
class SearchPage:
    """One page of a search: its packages, whether more follow, and how many match (counted up to
    SEARCH_COUNTED; `total` above it means "more than that")."""

    packages: list[Package]
    more: bool
    total: int


def bot_search(*, words: str, offset: int, limit: int) -> SearchPage:
    """One page of the console's search (packages.selectors, its ranking), packages in the archive channel only.
    Only the page (and one more, for "Next") is read, and matches are counted up to SEARCH_COUNTED: an exact count
    of a word in every package reads every package (0.2–1 s at 100,000), the page alone a few."""
    found = package_search(query=words).exclude(dest_message_ids=[])
    shown = list(found.select_related("collection")[offset : offset + limit + 1])
    total = found.order_by().values("pk")[: SEARCH_COUNTED + 1].count()
    return SearchPage(packages=shown[:limit], more=len(shown) > limit, total=total)


def bot_latest(*, count: int) -> list[Package]:
    return list(package_search().exclude(dest_message_ids=[]).select_related("collection")[:count])


def bot_subscribe(*, person: BotPerson, words: str) -> str:
    words = " ".join(words.split())[:200]
    if not words:
        return "Say what to look out for: /subscribe dragon bust"
    if person.subscriptions.count() >= SUBSCRIPTIONS_MAX:
        return f"You have {SUBSCRIPTIONS_MAX} subscriptions, the most there may be; /unsubscribe one first."
    _, made = BotSubscription.objects.get_or_create(person=person, words=words)
    if not made:
        return f"You are already subscribed to “{words}”."
    bot_activity_add(person=person, kind="subscribed", text=words)
    return f"Subscribed: I'll tell you when a package matching “{words}” lands."


def bot_unsubscribe(*, person: BotPerson, words: str) -> str:
    words = " ".join(words.split())
    found = person.subscriptions.filter(Q(words=words) | Q(words__iexact=words))
    if not words or not found.exists():
        return "Say which: /unsubscribe followed by the words, as /subscriptions lists them."
    found.delete()
    return f"Unsubscribed from “{words}”."


def bot_stop(*, person: BotPerson) -> str:
    """/stop: every subscription gone, so the bot writes to this person only when they write first."""
    count, _ = person.subscriptions.all().delete()
    if count:
        bot_activity_add(person=person, kind="stopped", text=f"{count} subscription{'s' if count > 1 else ''} ended")
    return "Stopped: you have no subscriptions now, and the bot writes to you only when you write to it."


@dataclass(frozen=True)
class Notice:
    """What one person is told in one message: new packages matching their subscriptions."""

    user_id: int
    notice_ids: tuple[int, ...]
    packages: tuple[tuple[int, str, int], ...]  # (id, name, size)
    words: tuple[str, ...]


def bot_notices_due() -> list[Notice]:
    """New packages in the archive channel matching subscriptions, each subscription told of each package once
    (a unique row made here, before the message), batched into one message per person. Only people the bot's
    rules let in now (audience, allow-list, membership as last asked, blocks) are told; the bot process asks again
    before it sends, and withholds what it may no longer send (bot_notice_withheld)."""
    by_person: dict[int, dict] = {}
    bot = bot_settings_get()
    refused: dict[int, bool] = {}
    for subscription in BotSubscription.objects.select_related("person"):
        person = subscription.person
        if person.pk not in refused:
            refused[person.pk] = bool(bot_refusal(person=person, bot=bot))
        if refused[person.pk]:
            continue
        found = (
            package_search(query=subscription.words)
            .filter(created_at__gte=subscription.created_at)
            .exclude(dest_message_ids=[])
            .exclude(bot_notices__subscription=subscription)[:NOTICE_PACKAGES_MAX]
        )
        for package in found:
            try:
                with transaction.atomic():
                    notice = BotNotice.objects.create(subscription=subscription, package=package)
            except IntegrityError:
                continue  # told already (another tick made it)
            batch = by_person.setdefault(subscription.person.user_id, {"ids": [], "packages": {}, "words": []})
            batch["ids"].append(notice.pk)
            batch["packages"][package.pk] = (package.pk, package.file_name, package.file_size)
            if subscription.words not in batch["words"]:
                batch["words"].append(subscription.words)
    return [
        Notice(
            user_id=user_id,
            notice_ids=tuple(batch["ids"]),
            packages=tuple(batch["packages"].values()),
            words=tuple(batch["words"]),
        )
        for user_id, batch in by_person.items()
    ]


def bot_notice_withheld(*, notice: Notice) -> None:
    """The person is refused now: they are told nothing, and would be told of these packages once let in again."""
    BotNotice.objects.filter(pk__in=notice.notice_ids, told_at__isnull=True).delete()


def bot_notice_told(*, notice: Notice) -> None:
    BotNotice.objects.filter(pk__in=notice.notice_ids).update(told_at=timezone.now())
    person = BotPerson.objects.filter(user_id=notice.user_id).first()
    bot_activity_add(person=person, kind="notice", text=f"{len(notice.packages)} new for “{', '.join(notice.words)}”")
