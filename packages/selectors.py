"""Reads of packages for pages and the API: search over names and archive listings, the file tree."""

import re
from dataclasses import dataclass, field

from django.contrib.postgres.search import SearchQuery
from django.db.models import Count, Exists, Min, OuterRef, Prefetch, Q, QuerySet, Subquery

from accounts.models import Chat
from packages.models import Collection, Package, PackageFile, PackagePreview, PackageSend, RawFile, words_of

# Matching paths shown under a package found by what is inside it.
MATCHES_SHOWN = 3


def _words_query(query: str) -> SearchQuery | None:
    """Every word of the query as a word prefix ("drag bod" finds red-dragon/body.stl); None when the
    query has characters the word vector does not hold, so the caller falls back to a substring match."""
    if not query.isascii():
        return None
    words = re.findall(r"[A-Za-z0-9]+", query)
    if not words:
        return None
    return SearchQuery(" & ".join(f"{word.lower()}:*" for word in words), search_type="raw", config="simple")


def package_search(
    *, query: str = "", needs_password: bool = False, collection_id: int | None = None
) -> QuerySet[Package]:
    """Packages whose file name, or a path inside whose archive, matches `query`; newest first.

    Words match word prefixes through one GIN-indexed word vector per package, so a search over a
    million listed files answers in milliseconds; a query with other characters falls back to a
    substring match. A package found by its listing carries `matched_files` (up to MATCHES_SHOWN
    of the paths that matched).
    """
    packages = _with_channel_ids(Package.objects.order_by("-created_at", "-pk"))
    if needs_password:
        packages = packages.filter(needs_password=True)
    if collection_id is not None:
        packages = packages.filter(collection_id=collection_id)
    query = query.strip()
    if not query:
        return packages
    words = _words_query(query)
    if words is None:
        matching = PackageFile.objects.filter(path__icontains=query)
        found = packages.filter(Q(file_name__icontains=query) | Q(Exists(matching.filter(package=OuterRef("pk")))))
    else:
        # Only the shown packages' paths are matched one by one, for the "found inside" lines.
        matching = PackageFile.objects.annotate(words=words_of("path")).filter(words=words)
        found = packages.filter(search_words=words)
    return found.prefetch_related(
        Prefetch("files", queryset=matching.order_by("path")[:MATCHES_SHOWN], to_attr="matched_files")
    )


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


@dataclass
class Folder:
    path: str  # "" is the archive's top level
    files: list[FileEntry] = field(default_factory=list)

    @property
    def size(self) -> int:
        return sum(entry.size for entry in self.files)


def package_folders(*, package: Package) -> list[Folder]:
    """The listing grouped by folder, folders and files by name."""
    folders: dict[str, Folder] = {}
    rows = package.files.order_by("path").values_list("path", "size", "compressed_size", "encrypted")
    for path, size, compressed_size, encrypted in rows:
        # Archives made on Windows may use backslashes.
        normalized = path.replace("\\", "/")
        if normalized.endswith("/"):
            continue  # a folder entry: its files say it all
        folder, _, name = normalized.rpartition("/")
        if folder not in folders:
            folders[folder] = Folder(path=folder)
        folders[folder].files.append(
            FileEntry(name=name, path=normalized, size=size, compressed_size=compressed_size, encrypted=encrypted)
        )
    return [folders[path] for path in sorted(folders)]


def package_sends(*, package: Package | None = None, collection: Collection | None = None) -> QuerySet[PackageSend]:
    sends = PackageSend.objects.select_related("chat", "account").prefetch_related("parts")
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
