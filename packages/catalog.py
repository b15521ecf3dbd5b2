"""The destination describes itself: one machine-readable line in every upload's caption, and the catalog
rebuilt (or repaired) from the destination channel alone.

The line: `stashcast:1 sha256=<content hash> part=<i>/<n> src=<source chat id>/<source message id>[ topic=<id>]`.
A part's `src` is the message of the volume it came from, so consecutive parts with the same `src` are the
byte-split pieces of one volume (`<volume>.001`, `.002`, …) and the volumes come back in order.
"""

import logging
import re
from dataclasses import dataclass, field
from enum import StrEnum

from django.db import IntegrityError, transaction
from django.urls import reverse

from accounts.models import AccountChat, AuthState, Chat, ChatTopic, TelegramAccount
from accounts.services import account_gateway_call
from core.errors import OperatorError
from core.notifications import notification_raise
from packages import detection
from packages.destination_reads import DestinationVolume, ListingJob, ListingRead, listings_read
from packages.models import MetadataStatus, Package
from packages.services import package_metadata_fill, package_stub_create
from telegram.records import ChatRef, DocumentMessage

logger = logging.getLogger(__name__)

CATALOG_REBUILT = "catalog_rebuilt"
_LINE = re.compile(
    r"^stashcast:1 sha256=(?P<hash>[0-9a-f]{64}) part=(?P<part>\d+)/(?P<parts>\d+)"
    r" src=(?P<chat>\d+)/(?P<message>\d+)(?: topic=(?P<topic>\d+))?$",
    re.M,
)
_SPLIT_SUFFIX = re.compile(r"\.\d{3}$")
# A rebuilt package waiting for its listing says so; the rebuild finds those by this start.
REBUILT = "Rebuilt from the destination channel"
REBUILT_NOTE = f"{REBUILT}: its file listing is read next."
NOT_LISTED_NOTE = REBUILT + "; its listing could not be read there yet: {trouble}"


def catalog_line(
    *, content_hash: str, part: int, parts: int, source_chat_id: int, source_message_id: int, topic_id=None
) -> str:
    """The caption line of part `part` (1-based) of `parts`."""
    line = f"stashcast:1 sha256={content_hash} part={part}/{parts} src={source_chat_id}/{source_message_id}"
    return f"{line} topic={topic_id}" if topic_id else line


@dataclass(frozen=True)
class CatalogPart:
    content_hash: str
    part: int
    parts: int
    source_chat_id: int
    source_message_id: int
    topic_id: int | None
    message_id: int
    name: str
    size: int


def catalog_part_read(message: DocumentMessage) -> CatalogPart | None:
    """The part a destination message holds, from its caption line; None for a document without one."""
    match = _LINE.search(message.text or "")
    if match is None or message.document is None:
        return None
    part, parts = int(match["part"]), int(match["parts"])
    if not 1 <= part <= parts:
        return None
    return CatalogPart(
        content_hash=match["hash"],
        part=part,
        parts=parts,
        source_chat_id=int(match["chat"]),
        source_message_id=int(match["message"]),
        topic_id=int(match["topic"]) if match["topic"] else None,
        message_id=message.id,
        name=message.document.name,
        size=message.document.size,
    )


@dataclass
class CatalogRebuild:
    """What a rebuild found and did."""

    documents: int = 0
    created: int = 0
    repaired: int = 0
    unchanged: int = 0
    without_line: list[int] = field(default_factory=list)  # message ids of documents that are no package
    incomplete: dict[str, str] = field(default_factory=dict)  # content hash → which parts are missing
    created_ids: list[int] = field(default_factory=list)
    listed: int = 0  # listings read back in place, by ranged reads
    ranged_bytes_read: int = 0
    ranged_bytes_size: int = 0  # the size of the packages listed in place
    full_reads: list[str] = field(default_factory=list)  # packages read whole to list them (RAR sets)
    not_listed: dict[str, str] = field(default_factory=dict)  # file name → why its listing was not read

    def summary(self) -> str:
        text = (
            f"{self.documents} documents read: {self.created} packages added, {self.repaired} repaired, "
            f"{self.unchanged} already right"
        )
        if self.listed or self.full_reads:
            text += f"; {self.listed} listings read in place"
            if self.ranged_bytes_size:
                text += f" ({100 * self.ranged_bytes_read / self.ranged_bytes_size:.2f} % of their bytes read)"
            if self.full_reads:
                text += f", {len(self.full_reads)} read in full ({', '.join(self.full_reads[:5])})"
        if self.not_listed:
            text += f"; {len(self.not_listed)} listings not read"
        if self.incomplete:
            text += f"; {len(self.incomplete)} with parts missing"
        if self.without_line:
            text += f"; {len(self.without_line)} documents carry no catalog line"
        return text + "."


def catalog_reader(*, chat: Chat) -> TelegramAccount | None:
    """An account logged in that can read `chat`."""
    link = (
        AccountChat.objects.filter(chat=chat, account__is_active=True, account__auth_state=AuthState.AUTHENTICATED)
        .select_related("account")
        .order_by("-can_post", "account__phone")
        .first()
    )
    return link.account if link else None


async def _documents(gateway, ref: ChatRef) -> list[DocumentMessage]:
    found = []
    offset_id: int | None = 0
    while offset_id is not None:
        page = await gateway.search_documents(ref, min_id=0, offset_id=offset_id)
        found += [message for message in page.messages if message.document is not None]
        offset_id = page.next_offset_id
    return found


def catalog_documents(*, chat: Chat, account: TelegramAccount | None = None) -> list[DocumentMessage]:
    """Every document of `chat`, newest first, read by `account` (default: one that can read it)."""
    account = account or catalog_reader(chat=chat)
    if account is None:
        raise OperatorError(f"No logged-in account can read “{chat.title}”: add one to it and refresh its chats.")
    ref = AccountChat.objects.select_related("chat").get(account=account, chat=chat).ref
    return account_gateway_call(account=account, action=lambda gateway: _documents(gateway, ref))


def catalog_rebuild(*, chat: Chat, account: TelegramAccount | None = None, on_progress=None) -> CatalogRebuild:
    """Read every document of the destination `chat`, add the packages the catalog lacks and repair the
    destination messages of those it has, then read each added package's listing back from its documents
    (`catalog_listings_restore`). Packages are keyed by content hash, so a second rebuild changes nothing."""
    account = account or catalog_reader(chat=chat)
    documents = catalog_documents(chat=chat, account=account)
    parts = [part for part in map(catalog_part_read, documents) if part is not None]
    without_line = sorted({message.id for message in documents} - {part.message_id for part in parts})
    result = CatalogRebuild(documents=len(documents), without_line=without_line)
    by_hash: dict[str, dict[int, CatalogPart]] = {}
    for part in sorted(parts, key=lambda p: p.message_id):
        by_hash.setdefault(part.content_hash, {})[part.part] = part  # a later upload of a part wins
    for content_hash, found in by_hash.items():
        count = max(p.parts for p in found.values())
        missing = [str(number) for number in range(1, count + 1) if number not in found]
        if missing:
            result.incomplete[content_hash] = f"part {', '.join(missing)} of {count} missing"
            continue
        outcome, package = _package_restore(chat=chat, ordered=[found[number] for number in range(1, count + 1)])
        setattr(result, outcome, getattr(result, outcome) + 1)
        if outcome == RestoreOutcome.CREATED:
            result.created_ids.append(package.pk)
    catalog_listings_restore(chat=chat, account=account, documents=documents, result=result, on_progress=on_progress)
    logger.info("Catalog rebuild from %s: %s", chat, result.summary())
    return result


def catalog_listings_restore(
    *, chat: Chat, account: TelegramAccount, documents: list[DocumentMessage], result: CatalogRebuild, on_progress
) -> None:
    """The listing of every package rebuilt without one, read from its destination documents: by ranged reads
    where they tell it (a zip's central directory, a 7z's end header, a RAR volume's headers), else in full;
    `on_progress(file name, ListingRead, done, total)` after each. A package whose bytes Telegram would not
    give keeps waiting for the next rebuild, with the reason."""
    by_id = {message.id: message for message in documents}
    packages = {
        package.pk: package
        for package in Package.objects.filter(
            destination_chat=chat, metadata_status=MetadataStatus.UNAVAILABLE, metadata_error__startswith=REBUILT
        )
        if all(message_id in by_id for message_id in package.dest_message_ids)
    }
    jobs = [_listing_job(package, by_id) for package in packages.values()]
    if not jobs:
        return
    ref = AccountChat.objects.select_related("chat").get(account=account, chat=chat).ref

    def progress(job: ListingJob, read: ListingRead, done: int, total: int) -> None:
        how = "in full" if read.full_read else "in place"
        logger.info(
            "Listing %d/%d, %s: %d bytes read %s", done, total, packages[job.key].file_name, read.bytes_read, how
        )
        if on_progress is not None:
            on_progress(packages[job.key].file_name, read, done, total)

    reads = account_gateway_call(
        account=account, action=lambda gateway: listings_read(gateway, ref, jobs, on_progress=progress)
    )
    for job in jobs:
        package, read = packages[job.key], reads[job.key]
        if read.listing is None:
            result.not_listed[package.file_name] = read.trouble
            package.metadata_error = NOT_LISTED_NOTE.format(trouble=read.trouble)
            package.save(update_fields=["metadata_error"])
            continue
        package_metadata_fill(package=package, volume_paths=[], listing=read.listing)
        if read.full_read:
            result.full_reads.append(package.file_name)
        else:
            result.listed += 1
            result.ranged_bytes_read += read.bytes_read
            result.ranged_bytes_size += job.size


def _listing_job(package: Package, by_id: dict[int, DocumentMessage]) -> ListingJob:
    """The package's volumes as its destination documents hold them, in order: consecutive parts from one
    source message are the byte-split pieces of one volume (as `_volumes` reads them)."""
    groups: list[list[DocumentMessage]] = []
    sources: list[int | None] = []
    for message_id in package.dest_message_ids:
        message = by_id[message_id]
        part = catalog_part_read(message)
        source = part.source_message_id if part else None
        if groups and sources[-1] == source:
            groups[-1].append(message)
        else:
            groups.append([message])
            sources.append(source)
    names = package.volume_names if len(package.volume_names) == len(groups) else [m[0].document.name for m in groups]
    volumes = tuple(DestinationVolume(name=name, parts=tuple(group)) for name, group in zip(names, groups, strict=True))
    return ListingJob(key=package.pk, archive_type=package.archive_type, volumes=volumes)


def _volumes(ordered: list[CatalogPart]) -> list[tuple[str, int, int]]:
    """(name, size, source message id) per volume: consecutive parts from one source message are one split
    volume (`name.001`, `name.002`, …)."""
    volumes: list[list] = []
    for part in ordered:
        if volumes and volumes[-1][2] == part.source_message_id:
            volumes[-1][1] += part.size
            volumes[-1][0] = _SPLIT_SUFFIX.sub("", part.name)
        else:
            volumes.append([part.name, part.size, part.source_message_id])
    return [tuple(volume) for volume in volumes]


class RestoreOutcome(StrEnum):
    """What a rebuild did to one package; each is also the name of its CatalogRebuild counter."""

    CREATED = "created"
    REPAIRED = "repaired"
    UNCHANGED = "unchanged"


def _package_restore(*, chat: Chat, ordered: list[CatalogPart]) -> tuple[RestoreOutcome, Package | None]:
    """What the rebuild did to the package, and the package."""
    first = ordered[0]
    message_ids = [part.message_id for part in ordered]
    part_names = [part.name for part in ordered]
    with transaction.atomic():
        package = Package.objects.select_for_update().filter(content_hash=first.content_hash).first()
        if package is not None:
            if package.dest_message_ids == message_ids and package.destination_chat_id == chat.pk:
                return RestoreOutcome.UNCHANGED, package
            package.dest_message_ids, package.dest_part_names = message_ids, part_names
            package.destination_chat, package.reupload_needed = chat, False
            package.save(update_fields=["dest_message_ids", "dest_part_names", "destination_chat", "reupload_needed"])
            return RestoreOutcome.REPAIRED, package
        volumes = _volumes(ordered)
        names = [name for name, _, _ in volumes]
        kind = detection.classify(names[0])
        source_chat = Chat.objects.filter(telegram_id=first.source_chat_id).first()
        topic = (
            ChatTopic.objects.filter(chat=source_chat, topic_id=first.topic_id).first()
            if source_chat and first.topic_id
            else None
        )
        try:
            with transaction.atomic():
                package = package_stub_create(
                    content_hash=first.content_hash,
                    file_name=names[0],
                    file_size=sum(size for _, size, _ in volumes),
                    archive_type=kind.archive_type if kind else "",
                    is_multipart=len(volumes) > 1,
                    part_count=len(volumes),
                    volume_names=names,
                    source_chat=source_chat,
                    source_message_id=first.source_message_id,
                    source_message_ids=[message_id for _, _, message_id in volumes],
                    source_topic_id=first.topic_id,
                    source_topic_title=topic.title if topic else "",
                    destination_chat=chat,
                    dest_message_ids=message_ids,
                    dest_part_names=part_names,
                )
        except IntegrityError:
            return RestoreOutcome.UNCHANGED, None  # ingested meanwhile by a cycle: its row is the better one
        Package.objects.filter(pk=package.pk).update(
            metadata_status=MetadataStatus.UNAVAILABLE, metadata_error=REBUILT_NOTE
        )
    return RestoreOutcome.CREATED, package


def catalog_rebuild_notify(*, chat: Chat, result: CatalogRebuild) -> None:
    notification_raise(
        type=CATALOG_REBUILT,
        severity="warning" if result.incomplete else "info",
        title=f"Catalog rebuilt from {chat.title}",
        message=result.summary(),
        subject=f"chat:{chat.pk}",
        url=reverse("operations"),
        context={"incomplete": result.incomplete, "without_line": result.without_line[:100]},
    )
