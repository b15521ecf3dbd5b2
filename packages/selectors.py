"""Reads of packages for pages and the API: search over names and archive listings, the file tree."""

import re
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta

from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.search import SearchQuery
from django.core.cache import cache
from django.db import connection
from django.db.models import Count, Exists, Func, Min, OuterRef, Prefetch, Q, QuerySet, Subquery, TextField, Value
from django.db.models.functions import Lower
from django.utils import timezone

from accounts.models import Chat
from core.crypto import SealBroken, unseal
from packages.models import (
    ChannelPassword,
    Collection,
    Package,
    PackageFile,
    PackagePreview,
    PackageSend,
    RawFile,
    RepackDecision,
    words_of,
)
from packages.passwords import caption_masked

# Matching paths shown under a package found by what is inside it.
MATCHES_SHOWN = 3


def _words_query(query: str) -> SearchQuery | None:
    """Every word of the query as a word prefix ("drag bod" finds red-dragon/body.stl); None when the
    query has characters the word vector does not hold."""
    if not query.isascii():
        return None
    words = re.findall(r"[A-Za-z0-9]+", query)
    if not words:
        return None
    return SearchQuery(" & ".join(f"{word.lower()}:*" for word in words), search_type="raw", config="simple")


def _trigrams(query: str) -> Func:
    """The query's three-letter pieces, as the name_grams column holds them (the same SQL function)."""
    return Func(Value(query), function="text_trigrams", output_field=ArrayField(TextField()))


@dataclass(frozen=True)
class PackageFilters:
    """What the Packages page and the API narrow the list by; empty values do not narrow it."""

    query: str = ""
    needs_password: bool = False
    creator: str = ""
    tag: str = ""
    channel: int | None = None  # the source channel's id
    archive_type: str = ""
    size_min: int | None = None  # bytes
    size_max: int | None = None
    added_from: date | None = None
    added_to: date | None = None  # inclusive
    sort: str = "newest"
    likely_repacks: bool = False
    collection: int | None = None  # the collection's id


SORTS = {
    "newest": ("-created_at", "-pk"),
    "oldest": ("created_at", "pk"),
    "name": (Lower("file_name"), "pk"),
    "largest": ("-file_size", "-pk"),
    "smallest": ("file_size", "pk"),
}


def package_search(
    *,
    query: str = "",
    needs_password: bool = False,
    collection_id: int | None = None,
    filters: PackageFilters | None = None,
) -> QuerySet[Package]:
    """Packages matching the filters, in the chosen order.

    The query matches word prefixes (one GIN-indexed word vector per package) or, from three characters
    on, any part of the name or of a listed path (a GIN index on the text's three-letter pieces narrows the
    packages, a substring check confirms them). A package found by its listing carries `matched_files`
    (up to MATCHES_SHOWN of the paths that matched) and `matched_count` (how many did).
    """
    if filters is None:
        filters = PackageFilters(query=query, needs_password=needs_password, collection=collection_id)
    elif collection_id is not None:
        filters = replace(filters, collection=collection_id)
    packages = _with_channel_ids(Package.objects.order_by(*SORTS.get(filters.sort, SORTS["newest"])))
    packages = _narrowed(packages, filters)
    query = filters.query.strip()
    if not query:
        return packages
    matching_files = _matching_files(query)
    found = packages.filter(_matches(query))
    return found.annotate(
        matched_count=Subquery(
            matching_files.filter(package=OuterRef("pk"))
            .order_by()
            .values("package")
            .annotate(n=Count("*"))
            .values("n")
        )
    ).prefetch_related(
        Prefetch("files", queryset=matching_files.order_by("path")[:MATCHES_SHOWN], to_attr="matched_files")
    )


def _narrowed(packages: QuerySet[Package], filters: PackageFilters) -> QuerySet[Package]:
    if filters.needs_password:
        packages = packages.filter(needs_password=True)
    if filters.creator:
        packages = packages.filter(creator=filters.creator)
    if filters.tag:
        packages = packages.filter(tags__contains=[filters.tag])
    if filters.channel is not None:
        packages = packages.filter(source_chat__channel=filters.channel)
    if filters.archive_type:
        packages = packages.filter(archive_type=filters.archive_type)
    if filters.size_min is not None:
        packages = packages.filter(file_size__gte=filters.size_min)
    if filters.size_max is not None:
        packages = packages.filter(file_size__lte=filters.size_max)
    # Whole days in the operator's time zone, as bounds on the indexed column itself.
    if filters.added_from is not None:
        packages = packages.filter(created_at__gte=_day_start(filters.added_from))
    if filters.added_to is not None:
        packages = packages.filter(created_at__lt=_day_start(filters.added_to + timedelta(days=1)))
    if filters.likely_repacks:
        packages = packages.filter(likely_same_as__isnull=False).exclude(repack_decision=RepackDecision.KEPT)
    if filters.collection is not None:
        packages = packages.filter(collection_id=filters.collection)
    return packages


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=timezone.get_current_timezone())


def _matches(query: str) -> Q:
    words = _words_query(query)
    if len(query) >= 3:
        # The pieces only narrow (they may sit apart in the text); the row's own text confirms.
        substring = Q(name_grams__contains=_trigrams(query)) & Q(search_text__contains=Lower(Value(query)))
        return substring if words is None else Q(search_words=words) | substring
    if words is not None:
        return Q(search_words=words)
    # One or two characters the word vector does not hold: a plain scan, as short as the query.
    return Q(file_name__icontains=query) | Q(
        Exists(PackageFile.objects.filter(package=OuterRef("pk"), path__icontains=query))
    )


def _matching_files(query: str) -> QuerySet[PackageFile]:
    """The listed files a query matches, by word prefixes in their path or by a part of it."""
    words = _words_query(query)
    substring = Q(path__icontains=query)
    if words is None:
        return PackageFile.objects.filter(substring)
    return PackageFile.objects.annotate(words=words_of("path")).filter(Q(words=words) | substring)


def package_matched_paths(*, package: Package, query: str) -> set[str]:
    """The paths of one package's listing that a search matched: highlighted in its file tree."""
    query = query.strip()
    if not query:
        return set()
    return set(_matching_files(query).filter(package=package).values_list("path", flat=True))


# The filters' choices are read from every package: a minute old is fresh enough to pick from.
FILTER_CHOICES_SECONDS = 60
FILTER_CHOICES_SHOWN = 500


def package_filter_choices() -> dict[str, list]:
    """What the filters offer: the creators, tags, archive types and source channels in use."""
    choices = cache.get("packages:filter-choices")
    if choices is not None:
        return choices
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT DISTINCT creator FROM packages_package WHERE creator <> '' ORDER BY creator LIMIT %s",
            [FILTER_CHOICES_SHOWN],
        )
        creators = [row[0] for row in cursor.fetchall()]
        cursor.execute(
            "SELECT DISTINCT tag FROM packages_package, unnest(tags) AS tag ORDER BY tag LIMIT %s",
            [FILTER_CHOICES_SHOWN],
        )
        tags = [row[0] for row in cursor.fetchall()]
        cursor.execute("SELECT DISTINCT archive_type FROM packages_package ORDER BY archive_type")
        types = [row[0] for row in cursor.fetchall()]
    # Channels by their chat: a chat that is the source of some package (one index probe per chat).
    sources = Chat.objects.filter(Exists(Package.objects.filter(source_chat=OuterRef("pk")))).exclude(channel=None)
    channels = list(sources.order_by("title").values_list("channel", "title")[:FILTER_CHOICES_SHOWN])
    choices = {"creators": creators, "tags": tags, "types": types, "channels": channels}
    cache.set("packages:filter-choices", choices, FILTER_CHOICES_SECONDS)
    return choices


def _with_channel_ids(packages: QuerySet[Package]) -> QuerySet[Package]:
    """`source_channel` and `destination_channel`: the ids of the channels that wrap the package's chats, by
    which pages and the API name them. Read through the chat's reverse `channel` accessor (no import, no
    migration: packages stay below ingestion), one subquery per shown row so a search keeps its index."""

    def channel_of(field: str) -> Subquery:
        return Subquery(Chat.objects.filter(pk=OuterRef(field)).values("channel")[:1])

    return packages.annotate(
        source_channel=channel_of("source_chat"), destination_channel=channel_of("destination_chat")
    )


def packages_from_chat(*, chat) -> QuerySet[Package]:
    """The packages first uploaded from this source chat, newest first."""
    return _with_channel_ids(Package.objects.filter(source_chat=chat).order_by("-created_at", "-pk"))


def package_get(*, pk: int) -> Package:
    """One package with where it came from and went, and `run_id`: the ingestion run that uploaded it
    (the link is ingestion's, read the same way); raises Package.DoesNotExist."""
    packages = Package.objects.select_related("source_chat", "destination_chat", "uploaded_by", "preview", "collection")
    return _with_channel_ids(packages).annotate(run_id=Min("ingestion_runs__id")).get(pk=pk)


@dataclass(frozen=True)
class FileEntry:
    name: str
    path: str
    size: int
    compressed_size: int | None
    encrypted: bool = False
    matched: bool = False  # the search that led here matched it
    pk: int | None = None

    @property
    def is_model(self) -> bool:
        """A model the viewer on the package page can show."""
        return self.path.lower().endswith((".stl", ".3mf", ".obj"))


@dataclass
class Folder:
    path: str  # "" is the archive's top level
    files: list[FileEntry] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(entry.size for entry in self.files)

    @property
    def matched(self) -> int:
        return sum(entry.matched for entry in self.files)


def package_folders(*, package: Package, matched: set[str] = frozenset()) -> list[Folder]:
    """The listing grouped by folder, folders and files by name; the `matched` paths marked."""
    folders: dict[str, Folder] = {}
    rows = package.files.order_by("path").values_list("path", "size", "compressed_size", "encrypted", "pk")
    for path, size, compressed_size, encrypted, pk in rows:
        # Archives made on Windows may use backslashes.
        normalized = path.replace("\\", "/")
        if normalized.endswith("/"):
            continue  # a folder entry: its files say it all
        folder, _, name = normalized.rpartition("/")
        if folder not in folders:
            folders[folder] = Folder(path=folder)
        folders[folder].files.append(
            FileEntry(
                name=name,
                path=normalized,
                size=size,
                compressed_size=compressed_size,
                encrypted=encrypted,
                matched=path in matched,
                pk=pk,
            )
        )
    return [folders[path] for path in sorted(folders)]


def package_archive_kept(*, package: Package) -> bool:
    """Whether every raw file of the package is still kept (files can be read out of it)."""
    raws = package.raw_files.all()
    return raws.exists() and not raws.filter(Q(purged_at__isnull=False) | Q(object="")).exists()


def package_file(*, package_id: int, file_id: int) -> PackageFile | None:
    """One listed file of a package, or None."""
    return PackageFile.objects.select_related("package").filter(pk=file_id, package_id=package_id).first()


def package_sends(*, package: Package | None = None, collection: Collection | None = None) -> QuerySet[PackageSend]:
    sends = PackageSend.objects.select_related("chat", "account").prefetch_related("parts", "parts__package")
    if package is not None:
        sends = sends.filter(package=package)
    if collection is not None:
        sends = sends.filter(collection=collection)
    return sends


def collection_packages(*, collection: Collection) -> list[Package]:
    """A collection's packages in the order they were posted: the order a send copies them in."""
    return list(Package.objects.filter(collection=collection).order_by("source_posted_at", "pk"))


def package_send_get(*, pk: int) -> PackageSend:
    return package_sends().get(pk=pk)


def package_previews(*, package: Package) -> list[PackagePreview]:
    """The images the package can show: the photo posted with it first, then those inside, by path."""
    return list(package.previews.all())


def preview_get(*, package_id: int, preview_id: int) -> PackagePreview:
    """One thumbnail of one package; raises PackagePreview.DoesNotExist."""
    return PackagePreview.objects.get(package_id=package_id, pk=preview_id)


def collection_list() -> QuerySet[Collection]:
    """Collections, newest first, with how many packages each holds and the first one's preview."""
    first_preview = Package.objects.filter(collection=OuterRef("pk"), preview__isnull=False).order_by("pk")
    return (
        Collection.objects.select_related("source_chat")
        .annotate(
            package_count=Count("packages"),
            preview_id=Subquery(first_preview.values("preview_id")[:1]),
            preview_package_id=Subquery(first_preview.values("pk")[:1]),
        )
        .order_by("-created_at", "-pk")
    )


def collection_get(*, pk: int) -> Collection:
    """Raises Collection.DoesNotExist."""
    return collection_list().get(pk=pk)


def collection_choices(*, exclude_id: int | None = None) -> QuerySet[Collection]:
    """Collections to merge into or add to, by name."""
    return Collection.objects.exclude(pk=exclude_id).order_by("name", "pk").only("pk", "name")


def raw_file_kept(*, file_uid: str, size: int) -> RawFile | None:
    """The raw file of a Telegram document whose bytes are still in the storage (any machine may have
    downloaded it): read back instead of downloaded again."""
    return RawFile.objects.filter(file_uid=file_uid, size=size, purged_at__isnull=True).exclude(object="").first()


@dataclass(frozen=True)
class CaptionShown:
    """A source caption as one reader may see it: as posted for operators, its passwords masked for viewers."""

    text: str
    volumes: list[tuple[str, str]]  # (volume name, its own caption) where a volume says more than the set's


def package_caption_shown(*, package: Package, operator: bool) -> CaptionShown:
    def shown(text: str) -> str:
        return text if operator else caption_masked(text)

    volumes = [
        (name, shown(text))
        for name, text in zip(package.volume_names, package.volume_captions, strict=False)
        if text.strip() and text != package.caption
    ]
    return CaptionShown(text=shown(package.caption), volumes=volumes)


def package_password(*, package: Package) -> str:
    """The password that opened the package's listing (for operators only), '' when none was needed."""
    try:
        return unseal(package.password_sealed)
    except SealBroken:
        return "(sealed with a key no longer in STASHCAST_SESSION_KEYS)"


def channel_passwords(*, chat_id: int) -> list[ChannelPassword]:
    """A channel's archive passwords, oldest first, as hints (for operators: never the passwords)."""
    return list(ChannelPassword.objects.filter(chat_id=chat_id).defer("password_sealed"))


def source_posts_since(*, chat_id: int, since: datetime, made_before: datetime) -> bool:
    """Whether the chat has a package from a post made since `since` (one an edit could have replaced), the
    package made before `made_before` (one made from what was just read holds the post as it is)."""
    return Package.objects.filter(
        source_chat_id=chat_id,
        source_message_id__isnull=False,
        source_posted_at__gte=since,
        created_at__lt=made_before,
    ).exists()


def edited_after(edit_date: datetime | None, package: Package) -> bool:
    """Whether a post's edit came after its package was made (Telegram's dates are whole seconds)."""
    return edit_date is not None and edit_date >= package.created_at.replace(microsecond=0)


def source_posts_replaced(*, chat_id: int, messages) -> dict[int, Package]:
    """Of posts read again, those whose file was replaced since their package was made: edited after it, and
    holding a document no package knows. Message id → the package the post still stands for (a caption-only
    edit keeps the document, so it is none)."""
    edited = {m.id: m for m in messages if m.edit_date is not None and m.document is not None}
    if not edited:
        return {}
    known = set()
    for document_ids in Package.objects.filter(
        telegram_document_ids__overlap=[m.document.id for m in edited.values()]
    ).values_list("telegram_document_ids", flat=True):
        known.update(document_ids)
    owners = Package.objects.filter(
        source_chat_id=chat_id, source_message_id__isnull=False, source_message_ids__overlap=list(edited)
    )
    replaced = {}
    for package in owners:
        for message_id in package.source_message_ids:
            message = edited.get(message_id)
            if message is not None and message.document.id not in known and edited_after(message.edit_date, package):
                replaced[message_id] = package
    return replaced
