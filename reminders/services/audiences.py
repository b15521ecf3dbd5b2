"""Audiences: named lists of one account's groups, built by filters over its chats or imported from a CSV, that
reminders target; their members checked when a run is made."""

import csv
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from accounts.models import AccountChat, Chat, TelegramAccount
from core import clock
from core.numbers import whole_number
from reminders.models import Audience, AudienceKind, AudienceMember, ReminderAudience
from telegram.records import GROUP, SUPERGROUP, TOPIC_ID_MAX

AUDIENCE_CHAT_TYPES = (GROUP, SUPERGROUP)
CSV_MAX_BYTES = 1_000_000  # some 30,000 lines: far more groups than an account is in
NOT_A_MEMBER = "not a member"
NO_LONGER_IN_AUDIENCE = "no longer in audience"
# t.me/name, t.me/c/1234567890/5 (a private chat's messages), with or without https://
_LINK = re.compile(r"^(?:https?://)?(?:t\.me|telegram\.me)/(?:c/(?P<id>\d+)|(?P<name>[A-Za-z0-9_]{4,}))(?:/\S*)?$")


class AudienceError(ValueError):
    """An audience that cannot be saved or deleted as asked; `problems` are the reasons, for the operator."""

    def __init__(self, problems: Sequence[str]):
        super().__init__(" ".join(problems))
        self.problems = list(problems)


@dataclass(frozen=True)
class AudienceFilter:
    """Which of an account's groups an audience takes: each blank or None matches anything."""

    title_contains: str = ""
    min_members: int | None = None
    max_members: int | None = None
    chat_type: str = ""
    forum: bool | None = None

    def problems(self) -> list[str]:
        problems = []
        if self.chat_type not in ("", *AUDIENCE_CHAT_TYPES):
            problems.append(f"chat_type: one of {', '.join(AUDIENCE_CHAT_TYPES)}, or blank for both.")
        if self.min_members is not None and self.max_members is not None and self.min_members > self.max_members:
            problems.append("min_members: more than max_members; no group could match.")
        return problems


@dataclass(frozen=True)
class AudienceMemberSpec:
    chat: Chat
    topic_id: int | None = None


def audience_filter_of(audience: Audience) -> AudienceFilter:
    return AudienceFilter(
        title_contains=audience.title_contains,
        min_members=audience.min_members,
        max_members=audience.max_members,
        chat_type=audience.chat_type,
        forum=audience.forum,
    )


def audience_matches(*, account: TelegramAccount, filters: AudienceFilter) -> QuerySet[Chat]:
    """The account's groups the filters take, by title: groups it may post in (channels and people are not
    broadcast targets)."""
    chats = Chat.objects.filter(
        account_links__account=account, account_links__can_post=True, type__in=AUDIENCE_CHAT_TYPES
    )
    if filters.title_contains.strip():
        chats = chats.filter(title__icontains=filters.title_contains.strip())
    if filters.min_members is not None:
        chats = chats.filter(members_count__gte=filters.min_members)
    if filters.max_members is not None:
        chats = chats.filter(members_count__lte=filters.max_members)
    if filters.chat_type:
        chats = chats.filter(type=filters.chat_type)
    if filters.forum is not None:
        chats = chats.filter(is_forum=filters.forum)
    return chats.order_by("title", "telegram_id")


def audience_save(
    *,
    account: TelegramAccount,
    name: str,
    filters: AudienceFilter | None = None,
    members: Sequence[AudienceMemberSpec] | None = None,
    audience: Audience | None = None,
) -> Audience:
    """Create (or, given `audience`, change) an audience: by `filters` (its members are the groups they match
    now) or as a list of `members` (an import). AudienceError with every problem; nothing half-saved."""
    name = " ".join(name.split())
    problems = [] if name else ["name: give the audience a name."]
    if filters is not None:
        problems += filters.problems()
        members = [AudienceMemberSpec(chat=chat) for chat in audience_matches(account=account, filters=filters)]
    if audience is not None and audience.account_id != account.pk:
        problems.append("account: an audience keeps its account; make a new audience for another.")
    if problems:
        raise AudienceError(problems)
    audience = audience or Audience(account=account)
    audience.name = name
    audience.kind = AudienceKind.FILTER if filters is not None else AudienceKind.LIST
    filters = filters or AudienceFilter()
    audience.title_contains = filters.title_contains.strip()
    audience.min_members, audience.max_members = filters.min_members, filters.max_members
    audience.chat_type, audience.forum = filters.chat_type, filters.forum
    audience.updated_at = clock.now()
    try:
        with transaction.atomic():
            audience.save()
            audience.members.all().delete()
            AudienceMember.objects.bulk_create(
                AudienceMember(audience=audience, chat=member.chat, topic_id=member.topic_id)
                for member in dict.fromkeys(members or [])
            )
    except IntegrityError:
        raise AudienceError([f"name: {account} already has an audience “{name}”; choose another name."]) from None
    return audience


def audience_import(*, account: TelegramAccount, name: str, text: str, audience: Audience | None = None) -> Audience:
    """An audience from a CSV, one group a line: a chat id (Telegram's, or the Bot API's -100…), an @username
    or a t.me link, then optionally a topic id. Every line that names none of the account's groups is reported
    by its number, and then nothing is imported."""
    chats = {
        link.chat.telegram_id: link.chat
        for link in AccountChat.objects.filter(account=account, can_post=True, chat__type__in=AUDIENCE_CHAT_TYPES)
        .select_related("chat")
        .only("chat__telegram_id", "chat__title", "chat__username", "chat__is_forum", "chat__type")
    }
    by_username = {chat.username.lower(): chat for chat in chats.values() if chat.username}
    members, problems = [], []
    for number, row in enumerate(csv.reader(io.StringIO(text)), start=1):
        cells = [cell.strip() for cell in row]
        if not any(cells) or cells[0].startswith("#"):
            continue
        found, problem = _import_line(cells, account=account, chats=chats, by_username=by_username)
        if problem:
            problems.append(f"line {number}: {problem}")
        else:
            members.append(found)
    if not members and not problems:
        problems.append("the file names no group: one chat id, @username or t.me link a line.")
    if problems:
        raise AudienceError(problems)
    return audience_save(account=account, name=name, members=members, audience=audience)


def _import_line(
    cells: list[str], *, account: TelegramAccount, chats: dict[int, Chat], by_username: dict[str, Chat]
) -> tuple[AudienceMemberSpec | None, str]:
    value = cells[0]
    chat = None
    link = _LINK.match(value)
    if (number := whole_number(value.removeprefix("-"))) is not None:
        number = -number if value.startswith("-") else number
        chat = chats.get(number) or chats.get(int(str(-number)[3:]) if str(number).startswith("-100") else 0)
    elif value.startswith("@"):
        chat = by_username.get(value[1:].lower())
    elif link:
        chat = chats.get(int(link["id"])) if link["id"] else by_username.get(link["name"].lower())
    else:
        return None, f"“{value}” is not a chat id, an @username or a t.me link."
    if chat is None:
        return None, f"“{value}” is not one of {account}'s groups it may post in; refresh its chats, or join it."
    topic = cells[1] if len(cells) > 1 else ""
    if not topic:
        return AudienceMemberSpec(chat=chat), ""
    topic_id = whole_number(topic) or 0
    if not 1 <= topic_id <= TOPIC_ID_MAX:
        return None, f"topic “{topic}” is not a topic id (a number from 1 to {TOPIC_ID_MAX})."
    if not chat.is_forum:
        return None, f"“{chat.title}” is not a forum; leave the topic empty."
    return AudienceMemberSpec(chat=chat, topic_id=topic_id), ""


def audience_delete(*, audience: Audience) -> None:
    """Delete an audience no reminder targets; AudienceError naming the reminders that do."""
    names = list(
        ReminderAudience.objects.filter(audience=audience)
        .order_by("reminder__name")
        .values_list("reminder__name", flat=True)
    )
    if names:
        listed = ", ".join(f"“{name}”" for name in names)
        raise AudienceError([f"“{audience}” is used by {listed}: remove it from them first."])
    audience.delete()


def audience_members_checked(*, audiences: Sequence[Audience]) -> tuple[list[tuple[int, int | None]], dict]:
    """The audiences' members as a run sends to them: ((chat pk, topic) to send to, in order, and {(chat pk,
    topic): why not} for a group the account is no longer in (not a member) or that no longer matches its
    audience's filters (no longer in audience)."""
    send, skip = [], {}
    for audience in audiences:
        posting = set(
            AccountChat.objects.filter(account_id=audience.account_id, can_post=True).values_list("chat_id", flat=True)
        )
        matching = None
        if audience.kind == AudienceKind.FILTER:
            matching = set(
                audience_matches(account=audience.account, filters=audience_filter_of(audience)).values_list(
                    "pk", flat=True
                )
            )
        for chat_id, topic_id in audience.members.order_by("pk").values_list("chat_id", "topic_id"):
            key = (chat_id, topic_id)
            if chat_id not in posting:
                skip.setdefault(key, NOT_A_MEMBER)
            elif matching is not None and chat_id not in matching:
                skip.setdefault(key, NO_LONGER_IN_AUDIENCE)
            else:
                send.append(key)
    send = list(dict.fromkeys(send))
    return send, {key: why for key, why in skip.items() if key not in set(send)}
