"""Repacks recognised: the same files in another wrapper (re-zipped, renamed, zip → 7z) have another content
hash but the same listing. A listing's fingerprint is the hash of its normalised paths, sizes and CRCs; a
package whose listing mostly overlaps an earlier one's is "likely the same as" it.
"""

import hashlib
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import connection

from packages.models import Package, PackageFile, SkippedFingerprint

# Files an archiver or an OS adds on its own: a repack made on a Mac is still the same model.
JUNK_NAMES = frozenset({".ds_store", "thumbs.db", "desktop.ini"})
JUNK_FOLDERS = frozenset({"__macosx"})
# At least this share of the larger listing in common makes two packages "likely the same".
LIKELY_SAME_PERCENT = 80
# Candidates are found through this many of the package's largest files (a repack shares nearly all of them).
PROBE_FILES = 2000
CANDIDATES = 5


@dataclass(frozen=True)
class ListedFile:
    path: str
    size: int
    crc32: int | None


def normalised(files: Iterable[ListedFile]) -> list[ListedFile]:
    """Lowercased NFC paths without junk files and without one folder that wraps everything (a repack often
    adds or drops `Model Name/` at the top)."""
    kept = []
    for file in files:
        path = unicodedata.normalize("NFC", file.path.replace("\\", "/")).strip("/").lower()
        parts = path.split("/")
        if parts[-1] in JUNK_NAMES or JUNK_FOLDERS.intersection(parts[:-1]) or not path:
            continue
        kept.append(ListedFile(path=path, size=file.size, crc32=file.crc32))
    while kept and all("/" in file.path for file in kept):
        tops = {file.path.split("/", 1)[0] for file in kept}
        if len(tops) != 1:
            break
        kept = [ListedFile(path=file.path.split("/", 1)[1], size=file.size, crc32=file.crc32) for file in kept]
    return sorted(kept, key=lambda file: file.path)


def listing_fingerprint(files: Iterable[ListedFile]) -> str:
    """SHA-256 of the normalised listing; "" for an empty one (nothing to recognise)."""
    kept = normalised(files)
    if not kept:
        return ""
    digest = hashlib.sha256()
    for file in kept:
        # An empty file has no CRC worth the name (0, or none, depending on the archiver).
        crc = "" if file.crc32 is None or file.size == 0 else f"{file.crc32:08x}"
        digest.update(f"{file.path}\t{file.size}\t{crc}\n".encode())
    return digest.hexdigest()


def _content_keys(files: Iterable[ListedFile]) -> set[tuple]:
    """What a file is, whatever it is called: its size and CRC, else (no CRC) its name and size."""
    return {
        (file.size, file.crc32) if file.crc32 is not None else (file.path.rsplit("/", 1)[-1], file.size)
        for file in normalised(files)
    }


def overlap_percent(first: Iterable[ListedFile], second: Iterable[ListedFile]) -> int:
    """The share of the larger listing that the other one holds too, in percent (rounded down)."""
    first_keys, second_keys = _content_keys(first), _content_keys(second)
    larger = max(len(first_keys), len(second_keys))
    if not larger:
        return 0
    return len(first_keys & second_keys) * 100 // larger


def package_listed_files(*, package_id: int) -> list[ListedFile]:
    rows = PackageFile.objects.filter(package_id=package_id).values_list("path", "size", "crc32")
    return [ListedFile(path=path, size=size, crc32=crc) for path, size, crc in rows]


@dataclass(frozen=True)
class LikelySame:
    package: Package
    overlap: int  # percent


def likely_same_find(*, package: Package, files: list[ListedFile]) -> LikelySame | None:
    """The earlier package this one most likely repacks: the same fingerprint, else the one sharing the most
    files by size and CRC, when it shares at least LIKELY_SAME_PERCENT of the larger listing."""
    earlier = Package.objects.exclude(pk=package.pk).filter(created_at__lte=package.created_at)
    if package.listing_fingerprint:
        same = earlier.filter(listing_fingerprint=package.listing_fingerprint).order_by("created_at", "pk").first()
        if same is not None:
            return LikelySame(package=same, overlap=100)
    probes = sorted((file for file in files if file.crc32 is not None and file.size), key=lambda f: -f.size)
    probes = probes[:PROBE_FILES]
    if not probes:
        return None
    with connection.cursor() as cursor:
        # Each probe is one index lookup (packagefile_crc_size); packages sharing the most probes first.
        cursor.execute(
            "SELECT f.package_id FROM packages_packagefile f "
            "JOIN unnest(%s::bigint[], %s::bigint[]) AS probe(crc32, size) "
            "ON f.crc32 = probe.crc32 AND f.size = probe.size "
            "WHERE f.package_id <> %s GROUP BY f.package_id ORDER BY count(DISTINCT (f.crc32, f.size)) DESC "
            "LIMIT %s",
            [[file.crc32 for file in probes], [file.size for file in probes], package.pk, CANDIDATES],
        )
        candidate_ids = [row[0] for row in cursor.fetchall()]
    best = None
    for candidate in earlier.filter(pk__in=candidate_ids).order_by("created_at", "pk"):
        overlap = overlap_percent(files, package_listed_files(package_id=candidate.pk))
        if overlap >= LIKELY_SAME_PERCENT and (best is None or overlap > best.overlap):
            best = LikelySame(package=candidate, overlap=overlap)
    return best


def fingerprint_skipped_original(*, fingerprint: str) -> Package | None:
    """The package an operator said this listing is a copy of, when they chose to skip its future copies."""
    if not fingerprint:
        return None
    skipped = SkippedFingerprint.objects.select_related("package").filter(fingerprint=fingerprint).first()
    return skipped.package if skipped else None
