"""The listing child: a process of its own with a memory ceiling and a time limit, so hostile headers end as a
ListingError with a reason, never as a dead worker. `list_in_child` is the parent's side, `child_main` the
child's (started as `python -m packages.archives`, the request on stdin, one JSON answer on stdout)."""

import base64
import contextlib
import json
import os
import resource
import subprocess
import sys
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
)
from packages.archives.listing import entries_list
from packages.archives.passwords import password_that_opens
from packages.archives.ranged import RANGE_BYTES
from packages.archives.thumbnails import thumbnails_make

LISTING_MEMORY_BYTES = 1024**3
LISTING_TIMEOUT_SECONDS = 60

_PROJECT_ROOT = Path(__file__).resolve().parent.parent.parent


def list_in_child(
    archive_type: str,
    volumes: list[Path] | list[RemoteVolume],
    thumbnails: int,
    range_bytes: int,
    passwords: list[str] = (),
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
    }
    python_path = os.pathsep.join(filter(None, [str(_PROJECT_ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": python_path}
    try:
        done = subprocess.run(
            [sys.executable, "-m", "packages.archives"],
            input=json.dumps(request).encode(),
            capture_output=True,
            timeout=LISTING_TIMEOUT_SECONDS,
            env=env,
            cwd=_PROJECT_ROOT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ListingError(
            f"Reading the archive listing took longer than {LISTING_TIMEOUT_SECONDS} s; it was stopped."
        ) from None
    try:
        answer = json.loads(done.stdout)
    except ValueError:
        answer = None
    if done.returncode != 0 or not isinstance(answer, dict):
        how = f"signal {-done.returncode}" if done.returncode < 0 else f"exit code {done.returncode}"
        last = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
        raise ListingError(reason_text(f"Reading the archive listing stopped unexpectedly ({how}). {last[0]}".strip()))
    if "error" in answer:
        error_class = PasswordProtected if answer.get("needs_password") else ListingError
        raise error_class(answer["error"])
    entries = [
        Entry(path=path, size=size, compressed_size=compressed, crc32=crc, unsafe=unsafe, encrypted=encrypted)
        for path, size, compressed, crc, unsafe, encrypted in answer["entries"]
    ]
    made = [
        Thumbnail(path=path, jpeg=base64.b64decode(jpeg), width=width, height=height)
        for path, jpeg, width, height in answer.get("thumbnails", [])
    ]
    return ArchiveListing(entries, made, answer.get("password_index"))


def child_main(request: dict) -> dict:
    """Everything from here runs with a memory ceiling."""
    memory = request["memory_bytes"]
    # Some systems (macOS) refuse an address-space limit; the time limit still holds there.
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
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
            entries = entries_list(request["type"], volumes, limits, range_bytes)
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
        "entries": [[e.path, e.size, e.compressed_size, e.crc32, e.unsafe, e.encrypted] for e in entries],
        "password_index": opened,
    }
    if request.get("thumbnails") and local:
        answer["thumbnails"] = thumbnails_make(request["type"], volumes, entries, request["thumbnails"])
    return answer


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
