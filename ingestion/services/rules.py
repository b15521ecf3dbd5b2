"""What each channel takes (ingestion/rules.py): its rules and start point changed, and tried on the channel
itself on Telegram (read only, nothing downloaded)."""

from dataclasses import dataclass
from datetime import date, datetime, time

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from accounts.services import gateway_call
from core.errors import OperatorError
from core.sizes import size_text
from ingestion import selectors
from ingestion.fetching import documents_above
from ingestion.models import Channel, StartPoint
from ingestion.rules import (
    KINDS,
    RULE_FIELDS,
    Rules,
    extensions_parse,
    message_link_parse,
    name_pattern_check,
    size_parse,
)
from ingestion.services.skipped import channel_rewind
from packages.detection import group_sets, set_may_grow
from telegram.errors import TelegramError

UNCHANGED = ...
TELEGRAM_BEGAN = date(2013, 8, 14)  # no post in any channel is older


def channel_rules_check(
    *,
    channel: Channel,
    take_kinds=UNCHANGED,
    take_multi_volume=UNCHANGED,
    leave_extensions=UNCHANGED,
    name_pattern=UNCHANGED,
    min_bytes=UNCHANGED,
    max_bytes=UNCHANGED,
    start_from=UNCHANGED,
    start_date=UNCHANGED,
    start_message_link=UNCHANGED,
) -> dict:
    """The channel's rule fields as they would be with these values (sizes may be "500 MB"); ValidationError
    per field, with what to write instead."""
    given = {key: value for key, value in locals().items() if key != "channel" and value is not UNCHANGED}
    current = {field: getattr(channel, field) for field in RULE_FIELDS}
    values, errors = {**current}, {}

    def read(field, parse):
        if field in given:
            try:
                values[field] = parse(given[field])
            except ValueError as exc:
                errors[field] = str(exc)

    read("take_kinds", _kinds_parse)
    read("take_multi_volume", bool)
    read("leave_extensions", extensions_parse)
    read("name_pattern", name_pattern_check)
    read("min_bytes", size_parse)
    read("max_bytes", size_parse)
    read("start_from", _start_parse)
    read("start_date", _date_parse)
    cap = settings.INGEST_MAX_PACKAGE_BYTES
    low, high = values["min_bytes"], values["max_bytes"]
    if "max_bytes" not in errors and high is not None and high > cap:
        errors["max_bytes"] = (
            f"At most {size_text(cap)}: the console takes no package above that from any channel. "
            "Leave it empty to take up to that."
        )
    if not errors.keys() & {"min_bytes", "max_bytes"} and low is not None and high is not None and low > high:
        errors["min_bytes"] = "The smallest size is above the largest: swap them, or leave one empty."
    start = values["start_from"]
    if start == StartPoint.DATE and "start_date" not in errors:
        odd = _start_date_odd(values["start_date"])
        if odd:
            errors["start_date"] = odd
    if start == StartPoint.MESSAGE and (given.get("start_message_link") or "").strip():
        try:
            link = message_link_parse(given["start_message_link"])
        except ValueError as exc:
            errors["start_message_link"] = str(exc)
        else:
            if link.chat_id is not None and link.chat_id != channel.telegram_id:
                errors["start_message_link"] = (
                    f"That link is to another chat ({link.chat_id}); {channel.title} is {channel.telegram_id}."
                )
            values["start_message_link"] = given["start_message_link"].strip()
            values["start_message_id"] = link.message_id
    elif start == StartPoint.MESSAGE and not values["start_message_id"]:
        errors["start_message_link"] = "Paste the link of the first post to take (Copy Post Link in Telegram)."
    if errors:
        raise ValidationError(errors)
    return values


def channel_rules_try(*, channel: Channel, **changes) -> Rules:
    """The filters the channel would have with these changes (checked, not saved): what a preview tries."""
    return Rules.of_fields(channel_rules_check(channel=channel, **changes))


def channel_rules_update(*, channel: Channel, **changes) -> Channel:
    """Save new rules. Filters apply from the next scan on and re-ingest nothing; a new start point other than
    "now" rewinds the watermarks to it, and what is already kept comes back as duplicates, never downloaded."""
    values = channel_rules_check(channel=channel, **changes)
    start_moved = _start_moved(channel, values)
    if start_moved and values["start_from"] == StartPoint.NOW:
        values["start_date"] = timezone.now()
    for field, value in values.items():
        setattr(channel, field, value)
    with transaction.atomic():
        channel.save(update_fields=list(values))
        if start_moved and values["start_from"] != StartPoint.NOW:
            channel_rewind(channel_id=channel.pk, below=channel.start_floor[0])
    return channel


def _start_moved(channel: Channel, values: dict) -> bool:
    """Whether the start point changes: "now" keeps its moment while it stays "now"."""
    start = values["start_from"]
    if start != channel.start_from:
        return True
    if start == StartPoint.DATE:
        return values["start_date"] != channel.start_date
    if start == StartPoint.MESSAGE:
        return values["start_message_id"] != channel.start_message_id
    return False


def _start_date_odd(day: datetime | None) -> str:
    """Why a start date cannot be the one meant, in words; "" when it can."""
    if day is None:
        return "Choose the date to start from."
    said = f"{day.day} {day:%b %Y}"
    if day.date() > timezone.localdate():
        return (
            f"{said} is still to come: the date picks where in the channel's past to begin. "
            "Choose a day up to today, or From now to take only what is posted from here on."
        )
    if day.date() < TELEGRAM_BEGAN:
        return f"{said} is before Telegram began (August 2013): choose The whole history instead."
    return ""


def _kinds_parse(kinds) -> list[str]:
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    unknown = [kind for kind in kinds if kind not in KINDS]
    if unknown:
        raise ValueError(f"Unknown kind {', '.join(map(str, unknown))}: choose among {', '.join(KINDS)}.")
    return sorted(set(kinds))


def _start_parse(start: str) -> str:
    if start not in StartPoint.values:
        raise ValueError(f"Start from one of: {', '.join(StartPoint.values)}.")
    return start


def _date_parse(value) -> datetime | None:
    if value in (None, ""):
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value)
        except ValueError as exc:
            raise ValueError(f"“{value}” is not a date: write it as 2025-06-30 (or 2025-06-30T18:00Z).") from exc
    if not isinstance(value, datetime) and isinstance(value, date):
        value = datetime.combine(value, time.min)
    if timezone.is_naive(value):
        value = timezone.make_aware(value)
    return value


# Trying the rules on the channel ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PreviewRow:
    message_id: int
    file_name: str
    size: int
    volumes: int
    left_out: str  # why the rules leave it out; "" when taken

    @property
    def size_text(self) -> str:
        return size_text(self.size)


@dataclass(frozen=True)
class RulesPreview:
    account: str
    rows: list[PreviewRow]  # newest first

    @property
    def taken(self) -> int:
        return sum(1 for row in self.rows if not row.left_out)


@dataclass(frozen=True)
class HistoryCount:
    account: str
    sets: int
    bytes: int
    taken_sets: int
    taken_bytes: int

    @property
    def bytes_text(self) -> str:
        return size_text(self.bytes)

    @property
    def taken_bytes_text(self) -> str:
        return size_text(self.taken_bytes)


def _judged(messages, rules: Rules) -> list[PreviewRow]:
    rows = []
    for archive_set in group_sets(sorted(messages, key=lambda message: message.id)):
        sizes = [item.document.size for item in archive_set.items]
        size = sum(sizes)
        why = rules.left_out(archive_set, size=size, may_grow=set_may_grow(archive_set, sizes=sizes))
        if not why and size > settings.INGEST_MAX_PACKAGE_BYTES:
            why = f"above {size_text(settings.INGEST_MAX_PACKAGE_BYTES)}, the largest package the console takes"
        rows.append(PreviewRow(archive_set.items[0].id, archive_set.file_name, size, len(sizes), why))
    return rows


def _read_channel(channel: Channel, read):
    """Run `read(gateway, ref)` with an account that can read the channel; OperatorError when none can."""
    found = selectors.channel_reader_ref(channel=channel)
    if found is None:
        raise OperatorError(f"No logged-in account is in {channel.title}: add one on the Accounts page first.")
    account, ref = found
    try:
        result, _ = gateway_call(account=account, action=lambda gateway: read(gateway, ref))
    except TelegramError as exc:
        raise OperatorError(f"Could not read {channel.title} with {account}: {exc}") from exc
    return account, result


def channel_rules_preview(*, channel: Channel, rules: Rules) -> RulesPreview:
    """What the rules would take of the channel's last HISTORY_PAGE documents: one request, nothing downloaded."""

    async def read(gateway, ref):
        page = await gateway.search_documents(ref, min_id=0)
        return [message for message in page.messages if message.document is not None]

    account, messages = _read_channel(channel, read)
    rows = sorted(_judged(messages, rules), key=lambda row: row.message_id, reverse=True)
    return RulesPreview(account=str(account), rows=rows)


def channel_history_count(*, channel: Channel, rules: Rules) -> HistoryCount:
    """How many sets and bytes the whole history holds, and how many the rules take: counted from the channel's
    search results (one request per HISTORY_PAGE documents), nothing downloaded."""

    def read(gateway, ref):
        return documents_above(gateway, ref, min_id=0)

    account, messages = _read_channel(channel, read)
    rows = _judged(messages, rules)
    taken = [row for row in rows if not row.left_out]
    return HistoryCount(
        account=str(account),
        sets=len(rows),
        bytes=sum(row.size for row in rows),
        taken_sets=len(taken),
        taken_bytes=sum(row.size for row in taken),
    )
