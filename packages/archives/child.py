"""The listing child: a process of its own with a memory ceiling and a time limit, so hostile headers end as a
ListingError with a reason, never as a dead worker. `list_in_child` is the parent's side, `child_main` the
child's, forked by the fork server of forks.py with the readers already imported."""

import base64
import contextlib
import contextvars
import os
import resource
import time
from pathlib import Path

from packages.archives.entries import (
    MAX_DECLARED_BYTES,
    MAX_ENTRIES,
    ArchiveListing,
    Entry,
    Limits,
    ListingError,
    PasswordProtected,
    RemoteVolume,
    Thumbnail,
    reason_text,
    safe_path,
)
from packages.archives.forks import ForkServer
from packages.archives.listing import entries_list
from packages.archives.members import member_extract
from packages.archives.model_previews import model_preview_make
from packages.archives.passwords import password_that_opens
from packages.archives.ranged import RANGE_BYTES
from packages.archives.thumbnails import thumbnails_make
from packages.detection import MODEL

LISTING_MEMORY_BYTES = 1024**3
LISTING_TIMEOUT_SECONDS = 60

# How much lower than its parent's a child's CPU priority is: a backfill's children yield to the console's pages.
_NICENESS = contextvars.ContextVar("listing_niceness", default=0)

# Started on the first listing; a Celery worker's pool process or a web worker has one of its own.
_FORKS = ForkServer()


@contextlib.contextmanager
def children_in_background():
    """Listing children started inside run at a lower CPU priority (work nobody waits on, such as a backfill)."""
    token = _NICENESS.set(10)
    try:
        yield
    finally:
        _NICENESS.reset(token)


def list_in_child(
    archive_type: str,
    volumes: list[Path] | list[RemoteVolume],
    thumbnails: int,
    range_bytes: int,
    passwords: list[str] = (),
    model_preview: bool = False,
) -> ArchiveListing:
    # The request goes in on stdin: signed links and passwords do not belong in a process list.
    request = {
        "type": archive_type,
        "volumes": [
            {"name": v.name, "url": v.url, "size": v.size} if isinstance(v, RemoteVolume) else {"path": str(v)}
            for v in volumes
        ],
        "max_entries": MAX_ENTRIES,
        "max_declared_bytes": MAX_DECLARED_BYTES,
        "memory_bytes": LISTING_MEMORY_BYTES,
        "thumbnails": thumbnails,
        "range_bytes": range_bytes,
        "passwords": list(passwords),
        "model_preview": model_preview,
    }
    answer = _child_answer(request, what="Reading the archive listing")
    if "error" in answer:
        error_class = PasswordProtected if answer.get("needs_password") else ListingError
        raise error_class(answer["error"])
    entries = [
        Entry(
            path=path,
            size=size,
            compressed_size=compressed,
            crc32=crc,
            unsafe=unsafe,
            encrypted=encrypted,
            header_offset=offset,
        )
        for path, size, compressed, crc, unsafe, encrypted, offset in answer["entries"]
    ]
    made = [
        Thumbnail(path=path, jpeg=base64.b64decode(jpeg), width=width, height=height)
        for path, jpeg, width, height in answer.get("thumbnails", [])
    ]
    model = answer.get("model_preview", {})
    if "made" in model:
        path, jpeg, width, height, kind = model["made"]
        made.append(Thumbnail(path=path, jpeg=base64.b64decode(jpeg), width=width, height=height, kind=kind))
    cpu_seconds, peak_memory_bytes = answer["used"]
    return ArchiveListing(
        entries, made, answer.get("password_index"), model.get("refused", ""), cpu_seconds, peak_memory_bytes
    )


def member_extract_in_child(archive_type: str, volumes: list[Path], path: str, out: Path) -> None:
    """One file (`path` as listed) of staged volumes written to `out` by the child; ListingError says why not."""
    request = {
        "job": "extract",
        "type": archive_type,
        "volumes": [{"path": str(volume)} for volume in volumes],
        "memory_bytes": LISTING_MEMORY_BYTES,
        "path": path,
        "out": str(out),
    }
    answer = _child_answer(request, what="Reading the file out of the archive")
    if "error" in answer:
        raise ListingError(answer["error"])


def _child_answer(request: dict, *, what: str) -> dict:
    """The child's one answer to `request`; ListingError when it ran out of time or died."""
    # The request travels through a socket: signed links and passwords do not belong in a process list.
    try:
        answer, code = _FORKS.run({**request, "niceness": _NICENESS.get()}, LISTING_TIMEOUT_SECONDS)
    except TimeoutError:
        raise ListingError(f"{what} took longer than {LISTING_TIMEOUT_SECONDS} s; it was stopped.") from None
    if answer is None:
        how = "" if code is None else f" (signal {-code})" if code < 0 else f" (exit code {code})"
        raise ListingError(f"{what} stopped unexpectedly{how}.")
    return answer


def child_run(request: dict) -> dict:
    """The child's whole life: one request, one answer, and what it cost."""
    try:
        answer = child_main(request)
    except Exception as exc:  # what child_main does not turn into a reason itself (a bad request)
        answer = {"error": reason_text(f"Cannot read the archive: {exc.__class__.__name__}: {exc}")}
    # A forked process's clock and peak start at the fork (ru_maxrss is in KiB on Linux).
    answer["used"] = [time.process_time(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024]
    return answer


def child_main(request: dict) -> dict:
    """Everything from here runs with a memory ceiling."""
    started = time.monotonic()
    os.nice(request.get("niceness", 0))
    memory = request["memory_bytes"]
    # Some systems (macOS) refuse an address-space limit; the time limit still holds there.
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    if request.get("job") == "extract":
        return member_extract(
            request["type"], [Path(v["path"]) for v in request["volumes"]], request["path"], request["out"]
        )
    limits = Limits(request["max_entries"], request["max_declared_bytes"])
    volumes = [
        Path(volume["path"]) if "path" in volume else RemoteVolume(volume["name"], volume["url"], volume["size"])
        for volume in request["volumes"]
    ]
    passwords = request.get("passwords") or []
    range_bytes = request.get("range_bytes") or RANGE_BYTES
    opened = None
    try:
        try:
            entries = _entries_list(request["type"], volumes, limits, range_bytes)
        except PasswordProtected as protected:
            entries, opened = _headers_opened(request["type"], volumes, limits, range_bytes, passwords, protected)
    except ListingError as exc:
        return {"error": reason_text(str(exc)), "needs_password": exc.needs_password}
    except MemoryError:
        return {
            "error": f"Reading the archive listing needed more than {memory // 1024**2} MiB of memory; "
            "its headers are too large (or crafted to be)."
        }
    except Exception as exc:  # any parser failure on hostile bytes means an unreadable archive
        return {"error": reason_text(f"Cannot read the archive listing: {exc.__class__.__name__}: {exc}")}
    local = all(isinstance(volume, Path) for volume in volumes)
    if opened is None and passwords and local and any(entry.encrypted for entry in entries):
        try:
            opened = password_that_opens(request["type"], volumes, passwords)
        except Exception:  # the listing stands; only which password opens it is unknown
            opened = None
    answer = {
        "entries": [
            [e.path, e.size, e.compressed_size, e.crc32, e.unsafe, e.encrypted, e.header_offset] for e in entries
        ],
        "password_index": opened,
    }
    if request.get("thumbnails") and local and request["type"] != MODEL:
        answer["thumbnails"] = thumbnails_make(request["type"], volumes, entries, request["thumbnails"])
    if request.get("model_preview") and local:
        seconds_left = LISTING_TIMEOUT_SECONDS - (time.monotonic() - started)
        answer["model_preview"] = model_preview_make(request["type"], volumes, entries, seconds_left)
    return answer


def _entries_list(archive_type, volumes, limits, range_bytes) -> list[Entry]:
    """A model posted as it is has one entry, itself."""
    if archive_type == MODEL:
        return [Entry(path=safe_path(volumes[0].name)[0], size=volumes[0].stat().st_size)]
    return entries_list(archive_type, volumes, limits, range_bytes)


def _headers_opened(archive_type, volumes, limits, range_bytes, passwords, protected) -> tuple[list[Entry], int]:
    """Encrypted headers: the entries as the first password that decrypts them reads them, and its index."""
    for index, password in enumerate(passwords):
        try:
            return entries_list(archive_type, volumes, limits, range_bytes, password), index
        except MemoryError:
            raise
        except Exception:  # a wrong key: a wrong-password answer, or garbage that does not parse
            continue
    tried = f" None of the {len(passwords)} password(s) offered (caption, channel) opened it." if passwords else ""
    raise PasswordProtected(f"{protected}{tried}") from None
