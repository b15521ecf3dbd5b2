"""Raw files in the storage: kept there, read back from there, listed in place.

The storage is the local disk (MEDIA_ROOT) or an object store shared by every machine (STORAGE_URL,
config/storage.py). A worker keeps each finished download there; any worker can then read it back:

- to upload or split it, as a local file: its own staged copy when it downloaded it, a link to the file on a
  local disk, else the object is streamed once into its staging folder and hashed on the way (a copy that is
  not the bytes first recorded is refused);
- to list it, in place: from an object store by ranged reads (signed links, so the listing child holds no
  credentials), without a local copy, except a multi-volume rar (rarfile opens the next volume by name).
"""

import hashlib
import re
import tempfile
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage

from packages.archives import RemoteVolume
from packages.detection import RAR

COPY_CHUNK = 4 * 1024 * 1024
MAX_DISK_NAME_BYTES = 200  # below every filesystem's 255-byte limit for one name
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f]")


class RawObjectUnreadable(Exception):
    """The kept copy is gone from the storage, or is not the bytes that were recorded."""

    def __init__(self, message: str, *, raw=None):
        super().__init__(message)
        self.raw = raw


def disk_name(file_name: str) -> str:
    """A Telegram file name as one path component on disk.

    Names come from whoever posted the file: `../x.zip`, `/tmp/x.zip` or a 300-byte name must neither
    escape the staging folder nor fail the write. The end of the name is kept, so volumes
    (`.part2.rar`, `.7z.002`) still find each other.
    """
    name = _UNPRINTABLE.sub("_", file_name).replace("\\", "/").rsplit("/", 1)[-1]
    encoded = name.encode("utf-8", "replace")
    if len(encoded) > MAX_DISK_NAME_BYTES:
        name = encoded[-MAX_DISK_NAME_BYTES:].decode("utf-8", "ignore")
    return "file" if name in ("", ".", "..") else name


class _StagedFile(File):
    """A staged download the local storage can move into place instead of copying."""

    def temporary_file_path(self) -> str:
        return self.name


def storage_is_local() -> bool:
    """Whether the storage's files are files on this machine's disk."""
    try:
        default_storage.path("")
    except NotImplementedError:
        return False
    return True


def object_save(raw, staged_path: Path, *, name: str) -> None:
    """Put a staged download into the storage as the raw file's object: moved on a local disk, uploaded to an
    object store (in parts, from the file) where the staged copy stays for this worker's own upload."""
    with open(staged_path, "rb") as staged:
        raw.object.save(name, _StagedFile(staged), save=False)


def object_chunks(raw):
    """A raw file's stored bytes in order, a few MiB at a time, never the whole object in memory."""
    with default_storage.open(raw.object.name, "rb") as source:
        if storage_is_local():
            while chunk := source.read(COPY_CHUNK):
                yield chunk
            return
        # django-storages' S3File spools the whole object before its first read: stream its object instead.
        body = source.obj.get()["Body"]
        try:
            yield from body.iter_chunks(COPY_CHUNK)
        finally:
            body.close()


def object_fetch(raw, target: Path) -> None:
    """Stream a raw file's object into `target`, hashing it on the way: the copy must be what was recorded."""
    digest = hashlib.sha256()
    size = 0
    try:
        with open(target, "wb") as sink:
            for chunk in object_chunks(raw):
                sink.write(chunk)
                digest.update(chunk)
                size += len(chunk)
    except FileNotFoundError:
        target.unlink(missing_ok=True)
        raise RawObjectUnreadable(f"the kept copy of {raw.file_name} is not in the storage", raw=raw) from None
    if digest.hexdigest() != raw.hash or size != raw.size:
        target.unlink(missing_ok=True)
        raise RawObjectUnreadable(
            f"the kept copy of {raw.file_name} is {size} bytes with SHA-256 {digest.hexdigest()[:12]}…, "
            f"not the {raw.size} bytes ({raw.hash[:12]}…) that were downloaded",
            raw=raw,
        )


@contextmanager
def raw_files_local(raw_files, names: list[str], *, staged: list[Path | None] | None = None, under: Path | None = None):
    """The raw files as local files in one folder under their original names (rar and 7z volumes find each
    other by name): this worker's staged copies where it has them, else the storage's files, fetched into a
    folder under `under` (default: the staging folder) when the storage is an object store."""
    staged = staged or [None] * len(raw_files)
    local = storage_is_local()
    root = Path(under or settings.INGEST_STAGING_DIR)
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="set-", dir=root) as folder:
        paths = []
        for raw, name, copy in zip(raw_files, names, staged, strict=True):
            target = Path(folder) / disk_name(name)
            if copy is not None and copy.exists():
                target.symlink_to(copy)
            elif local:
                target.symlink_to(default_storage.path(raw.object.name))
            else:
                object_fetch(raw, target)
            paths.append(target)
        yield paths


@contextmanager
def raw_files_listable(raw_files, names: list[str], *, archive_type: str):
    """What `packages.archives.read_archive` reads for a set: local files on a local disk; in an object
    store, the objects themselves by ranged reads, except a multi-volume rar, which is fetched first."""
    if storage_is_local() or (archive_type == RAR and len(raw_files) > 1):
        with raw_files_local(raw_files, names) as paths:
            yield paths
        return
    yield [
        RemoteVolume(name=disk_name(name), url=default_storage.url(raw.object.name), size=raw.size)
        for raw, name in zip(raw_files, names, strict=True)
    ]
