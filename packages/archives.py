"""Archive listings: read the directory of a zip, rar or 7z, never extract.

Archives come from strangers. A listing runs in a child process with a memory
ceiling and a time limit, so a header that declares millions of entries or an
endless parse ends as a ListingError with a reason, never as a dead worker.
Hostile input (not an archive, encrypted headers, absurd entry counts or sizes,
odd names) ends the same way. A volume in an object store is read in place by
ranged requests to a signed link (`RemoteVolume`): listing needs the central
directory or the headers, not the whole file (a RAR set too: rarfile's volumes
are opened as ranged readers). Entry paths are made safe to store and show; an
entry that points outside the archive (`../`, an absolute path, a link) is
listed relative to it and flagged `unsafe`.

Thumbnails of the first images inside are made in the same child, after the listing, in the time left.

Why this size: one reader per archive format (zip, rar, 7z) behind one listing; they share the checks.
"""

import base64
import bisect
import contextlib
import http.client
import io
import json
import os
import re
import resource
import signal
import subprocess
import sys
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import multivolumefile
import py7zr
import rarfile
from py7zr.io import BytesIOFactory

from packages.detection import MODEL, RAR, SEVEN_ZIP, ZIP, classify

MAX_ENTRIES = 200_000
# Above this a declared uncompressed size is a zip bomb or a lie: no model archive inflates to a terabyte.
MAX_DECLARED_BYTES = 1024**4
LISTING_MEMORY_BYTES = 1024**3
LISTING_TIMEOUT_SECONDS = 60
MAX_PATH_CHARS = 4096
MAX_REASON_CHARS = 500

_PROJECT_ROOT = Path(__file__).resolve().parent.parent
# C0/C1 controls (NUL cannot even be stored in PostgreSQL) and lone surrogates from broken UTF-16 names.
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_DRIVE = re.compile(r"^[A-Za-z]:")
_ZIP_UTF8_FLAG = 0x800
_ZIP_ENCRYPTED_FLAG = 0x1
_7Z_AES = b"\x06\xf1\x07\x01"
_S_IFMT, _S_IFLNK = 0o170000, 0o120000


@dataclass(frozen=True)
class Entry:
    path: str
    size: int
    compressed_size: int | None = None
    crc32: int | None = None
    # The archive placed it outside its own folder (../, absolute path) or it is a link: extracting it is risky.
    unsafe: bool = False
    # Its data is encrypted (zip ZipCrypto or AES, 7z AES, rar): listed, but it needs a password to extract.
    encrypted: bool = False


@dataclass(frozen=True)
class RemoteVolume:
    """A volume read where it is kept (an object store), by ranged GETs to a signed link."""

    name: str
    url: str
    size: int


class ListingError(Exception):
    """The listing is unavailable; the message says why."""

    needs_password = False


class PasswordProtected(ListingError):
    needs_password = True


@dataclass(frozen=True)
class Thumbnail:
    """A JPEG thumbnail of an image inside the archive, made in the listing child."""

    path: str
    jpeg: bytes
    width: int
    height: int


@dataclass(frozen=True)
class Listing:
    entries: list[Entry]
    thumbnails: list[Thumbnail]


def list_archive(archive_type: str, volumes: list[Path] | list[RemoteVolume]) -> list[Entry]:
    """Entries of an archive set whose volumes are staged, in order, in one folder (or read in place by ranged
    requests: a RAR set there only under its volumes' own names, which rarfile derives one from the other)."""
    return read_archive(archive_type, volumes).entries


def read_archive(
    archive_type: str, volumes: list[Path] | list[RemoteVolume], *, thumbnails: int = 0, range_bytes: int = 0
) -> Listing:
    """The listing, and thumbnails of up to `thumbnails` images inside (the first by path), each read
    bounded in the same child; an image that cannot be read is left out, never the listing. Thumbnails are
    made of staged volumes only. Remote volumes are read `range_bytes` at a time (default RANGE_BYTES)."""
    if archive_type == MODEL:
        first = volumes[0]
        size = first.size if isinstance(first, RemoteVolume) else first.stat().st_size
        return Listing([Entry(path=safe_path(first.name)[0], size=size)], [])
    if archive_type not in (ZIP, SEVEN_ZIP, RAR):
        raise ListingError(f"Unknown archive type {archive_type!r}")
    return _list_in_child(archive_type, volumes, thumbnails, range_bytes or RANGE_BYTES)


def safe_path(raw: str) -> tuple[str, bool]:
    """An entry path fit to store and show, and whether it pointed outside the archive.

    Backslashes count as separators (Windows extractors treat them so); `..`, `.`, empty parts, a leading
    slash and a drive letter are dropped, the way a careful extractor would place the entry.
    """
    text = _UNPRINTABLE.sub("\ufffd", raw).replace("\\", "/")
    escapes = text.startswith("/") or bool(_DRIVE.match(text))
    text = _DRIVE.sub("", text)
    kept: list[str] = []
    for part in text.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if kept:
                kept.pop()
            else:
                escapes = True
            continue
        kept.append(part)
    path = "/".join(kept) or "\ufffd"
    if len(path) > MAX_PATH_CHARS:
        path = path[: MAX_PATH_CHARS - 1] + "…"
    return path, escapes


def _reason(text: str) -> str:
    """An error text fit to store: archive parsers quote hostile names in their messages."""
    text = _UNPRINTABLE.sub("\ufffd", text)
    return text if len(text) <= MAX_REASON_CHARS else text[: MAX_REASON_CHARS - 1] + "…"


# -- the parent side ------------------------------------------------------------------------------------------


def _list_in_child(
    archive_type: str, volumes: list[Path] | list[RemoteVolume], thumbnails: int, range_bytes: int
) -> Listing:
    # The request goes in on stdin: signed links do not belong in a process list.
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
        raise ListingError(_reason(f"Reading the archive listing stopped unexpectedly ({how}). {last[0]}".strip()))
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
    return Listing(entries, made)


# -- the child side: everything below runs with a memory ceiling -------------------------------------------------


@dataclass(frozen=True)
class _Limits:
    max_entries: int
    max_declared_bytes: int


def _child_main(request: dict) -> dict:
    memory = request["memory_bytes"]
    # Some systems (macOS) refuse an address-space limit; the time limit still holds there.
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    limits = _Limits(request["max_entries"], request["max_declared_bytes"])
    volumes = [
        Path(volume["path"]) if "path" in volume else RemoteVolume(volume["name"], volume["url"], volume["size"])
        for volume in request["volumes"]
    ]
    try:
        entries = _list(request["type"], volumes, limits, request.get("range_bytes") or RANGE_BYTES)
    except ListingError as exc:
        return {"error": _reason(str(exc)), "needs_password": exc.needs_password}
    except MemoryError:
        return {
            "error": f"Reading the archive listing needed more than {memory // 1024**2} MiB of memory; "
            "its headers are too large (or crafted to be)."
        }
    except Exception as exc:  # any parser failure on hostile bytes means an unreadable archive
        return {"error": _reason(f"Cannot read the archive listing: {exc.__class__.__name__}: {exc}")}
    answer = {"entries": [[e.path, e.size, e.compressed_size, e.crc32, e.unsafe, e.encrypted] for e in entries]}
    if request.get("thumbnails") and all(isinstance(volume, Path) for volume in volumes):
        answer["thumbnails"] = _thumbnails(request["type"], volumes, entries, request["thumbnails"])
    return answer


# -- thumbnails of images inside, in the same child ---------------------------------------------------------------

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".webp", ".gif", ".bmp")
# An image bigger than this is not read for a preview: renders are rarely above it, and reading is bounded.
THUMBNAIL_SOURCE_MAX_BYTES = 25 * 1024**2
THUMBNAIL_MAX_PIXELS = 50_000_000  # above this a picture is a decompression bomb, or too big to bother
THUMBNAIL_EDGE = 480
THUMBNAILS_SECONDS = 20  # the listing is already made: thumbnails get what time is left, and no more


class _OutOfTime(Exception):
    pass


def image_entries(entries: list[Entry]) -> list[Entry]:
    """The images a preview may be made of, first by path."""
    return sorted(
        (
            entry
            for entry in entries
            if entry.path.lower().endswith(IMAGE_SUFFIXES)
            and not entry.encrypted
            and 0 < entry.size <= THUMBNAIL_SOURCE_MAX_BYTES
        ),
        key=lambda entry: entry.path.lower(),
    )


def thumbnail_make(data: bytes) -> tuple[bytes, int, int]:
    """A JPEG at most THUMBNAIL_EDGE pixels on its longer side; ValueError for what is not a sane picture."""
    from PIL import Image, ImageOps  # only the child and the photo step load Pillow

    Image.MAX_IMAGE_PIXELS = THUMBNAIL_MAX_PIXELS
    with warnings.catch_warnings():
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with Image.open(io.BytesIO(data)) as image:
                image = ImageOps.exif_transpose(image)
                image.thumbnail((THUMBNAIL_EDGE, THUMBNAIL_EDGE))
                image = image.convert("RGB")
                out = io.BytesIO()
                image.save(out, format="JPEG", quality=82)
        except (OSError, SyntaxError, Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise ValueError(f"not a picture that can be shown: {exc}") from exc
    return out.getvalue(), image.width, image.height


def _thumbnails(archive_type: str, volumes: list[Path], entries: list[Entry], wanted: int) -> list[list]:
    chosen = {entry.path for entry in image_entries(entries)[:wanted]}
    if not chosen:
        return []
    made = []

    def out_of_time(*_):
        raise _OutOfTime

    signal.signal(signal.SIGALRM, out_of_time)
    signal.setitimer(signal.ITIMER_REAL, THUMBNAILS_SECONDS)
    try:
        for path, data in _read_images(archive_type, volumes, chosen):
            try:
                jpeg, width, height = thumbnail_make(data)
            except ValueError:
                continue
            made.append([path, base64.b64encode(jpeg).decode(), width, height])
    except Exception:  # out of time or memory, a damaged archive, a reader that needs a tool: fewer previews
        pass
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return sorted(made, key=lambda made_one: made_one[0].lower())


def _read_images(archive_type: str, volumes: list[Path], chosen: set[str]):
    """(safe path, bytes) of the chosen entries, each read at most THUMBNAIL_SOURCE_MAX_BYTES."""
    if archive_type == ZIP:
        opener = (
            multivolumefile.open(_volume_base(volumes[0]), mode="rb")
            if len(volumes) > 1 and volumes[0].name.lower().endswith(".001")
            else _JoinedVolumes(sorted(volumes, key=_split_zip_order))
        )
        with opener as stream, zipfile.ZipFile(stream) as archive:
            for info in archive.infolist():
                path = safe_path(_zip_name(info))[0]
                if path in chosen and not info.is_dir():
                    with archive.open(info) as member:
                        yield path, member.read(THUMBNAIL_SOURCE_MAX_BYTES)
    elif archive_type == SEVEN_ZIP:
        with contextlib.ExitStack() as stack:
            if len(volumes) > 1:
                stream = stack.enter_context(multivolumefile.open(_volume_base(volumes[0]), mode="rb"))
                archive = stack.enter_context(py7zr.SevenZipFile(stream, mode="r"))
            else:
                archive = stack.enter_context(py7zr.SevenZipFile(volumes[0], mode="r"))
            names = [info.filename for info in archive.list() if safe_path(info.filename)[0] in chosen]
            factory = BytesIOFactory(THUMBNAIL_SOURCE_MAX_BYTES)
            archive.extract(targets=names, factory=factory)
            for name in names:
                if name in factory.products:
                    product = factory.get(name)
                    product.seek(0)
                    yield safe_path(name)[0], product.read()
    else:
        with rarfile.RarFile(volumes[0]) as archive:
            for info in archive.infolist():
                path = safe_path(info.filename)[0]
                if path in chosen and not info.is_dir():
                    with archive.open(info) as member:
                        yield path, member.read(THUMBNAIL_SOURCE_MAX_BYTES)


def _list(
    archive_type: str, volumes: list[Path] | list[RemoteVolume], limits: _Limits, range_bytes: int = 0
) -> list[Entry]:
    if isinstance(volumes[0], RemoteVolume):
        return _list_remote(archive_type, volumes, limits, range_bytes or RANGE_BYTES)
    if archive_type == ZIP:
        return _list_zip(volumes, limits)
    if archive_type == SEVEN_ZIP:
        return _list_7z(volumes, limits)
    return _list_rar(volumes, limits)


def _entry(raw_path: str, size, compressed, crc, *, link: bool, limits: _Limits, encrypted: bool = False) -> Entry:
    path, escapes = safe_path(raw_path)
    size = size or 0
    if not 0 <= size <= limits.max_declared_bytes:
        raise ListingError(
            f"The archive declares an entry of {size} bytes uncompressed, above the limit of "
            f"{limits.max_declared_bytes} bytes (a zip bomb, or a damaged header)."
        )
    if compressed is not None and not 0 <= compressed <= limits.max_declared_bytes:
        compressed = None
    return Entry(
        path=path, size=size, compressed_size=compressed, crc32=crc, unsafe=escapes or link, encrypted=encrypted
    )


def _checked(entries: list[Entry], limits: _Limits) -> list[Entry]:
    if len(entries) > limits.max_entries:
        raise ListingError(f"The archive lists {len(entries)} entries, above the limit of {limits.max_entries}.")
    total = sum(entry.size for entry in entries)
    if total > limits.max_declared_bytes:
        raise ListingError(
            f"The archive declares {total} bytes uncompressed, above the limit of {limits.max_declared_bytes} "
            "bytes (a zip bomb, or a damaged header)."
        )
    return entries


def _declared_count(count: int, limits: _Limits) -> None:
    """Refuse before parsing: the headers say how many entries follow."""
    if count > limits.max_entries:
        raise ListingError(f"The archive lists {count} entries, above the limit of {limits.max_entries}.")


def _list_zip(volumes: list[Path], limits: _Limits) -> list[Entry]:
    if len(volumes) > 1 and volumes[0].name.lower().endswith(".001"):
        with multivolumefile.open(_volume_base(volumes[0]), mode="rb") as stream:
            return _zip_entries(stream, limits)
    # A split set (`zip -s`: .z01, .z02…, then .zip) read as one stream: its central directory may start in
    # one volume and end in the next, and zipfile finds it from the end (offsets within a volume add up,
    # as the volumes before it are all there).
    with _JoinedVolumes(sorted(volumes, key=_split_zip_order)) as stream:
        return _zip_entries(stream, limits)


def _split_zip_order(volume: Path) -> tuple[int, int]:
    suffix = volume.suffix.lower()
    if len(suffix) >= 3 and suffix[1] == "z" and suffix[2:].isdecimal():
        return 0, int(suffix[2:])
    return 1, 0  # the .zip, last


class _JoinedVolumes(io.RawIOBase):
    """Several files (paths, or seekable readers) read as one, seekable: enough for zipfile to list a split set."""

    def __init__(self, volumes: list):
        # Paths are opened here and closed by close().
        self.files = [open(v, "rb") if isinstance(v, Path) else v for v in volumes]  # noqa: SIM115
        self.starts = []
        total = 0
        for file in self.files:
            self.starts.append(total)
            total += file.seek(0, io.SEEK_END)
        self.size = total
        self.position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def tell(self) -> int:
        return self.position

    def readinto(self, buffer) -> int:
        view, done = memoryview(buffer), 0
        while done < len(view) and self.position < self.size:
            index = bisect.bisect_right(self.starts, self.position) - 1
            file = self.files[index]
            file.seek(self.position - self.starts[index])
            count = file.readinto(view[done:])
            if not count:
                break
            done += count
            self.position += count
        return done

    def close(self) -> None:
        for file in self.files:
            file.close()
        super().close()


def _zip_entries(stream, limits: _Limits) -> list[Entry]:
    end_record = zipfile._EndRecData(stream)  # the end of central directory record, read before any entry
    if end_record is None:
        raise ListingError("Cannot read the archive listing: this is not a zip file (no central directory).")
    _declared_count(end_record[zipfile._ECD_ENTRIES_TOTAL], limits)
    stream.seek(0)
    with zipfile.ZipFile(stream) as archive:
        infos = archive.infolist()
        _declared_count(len(infos), limits)
        return _checked(
            [
                _entry(
                    _zip_name(info),
                    info.file_size,
                    info.compress_size,
                    info.CRC,
                    link=(info.external_attr >> 16) & _S_IFMT == _S_IFLNK,
                    limits=limits,
                    encrypted=bool(info.flag_bits & _ZIP_ENCRYPTED_FLAG),  # ZipCrypto, and AES (method 99)
                )
                for info in infos
                if not info.is_dir()
            ],
            limits,
        )


def _zip_name(info: zipfile.ZipInfo) -> str:
    """Names without the UTF-8 flag: UTF-8 when they decode as such (many tools omit the flag), else cp437."""
    if info.flag_bits & _ZIP_UTF8_FLAG:
        return info.orig_filename
    try:
        return info.orig_filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return info.orig_filename


def _list_7z(volumes: list[Path], limits: _Limits) -> list[Entry]:
    try:
        if len(volumes) > 1:
            with multivolumefile.open(_volume_base(volumes[0]), mode="rb") as stream:
                return _7z_entries(py7zr.SevenZipFile(stream, mode="r"), limits)
        with py7zr.SevenZipFile(volumes[0], mode="r") as archive:
            return _7z_entries(archive, limits)
    except py7zr.exceptions.PasswordRequired:
        raise PasswordProtected("The 7z archive has encrypted headers; it needs a password.") from None


def _7z_entries(archive: py7zr.SevenZipFile, limits: _Limits) -> list[Entry]:
    infos = archive.list()
    _declared_count(len(infos), limits)
    # An entry is encrypted when the folder (compressed block) holding its data goes through AES.
    encrypted = {
        file.filename
        for file in archive.files
        if file.folder is not None and any(coder["method"] == _7Z_AES for coder in file.folder.coders)
    }
    return _checked(
        [
            _entry(
                info.filename,
                info.uncompressed,
                info.compressed,
                info.crc32,
                link=info.is_symlink,
                limits=limits,
                encrypted=info.filename in encrypted,
            )
            for info in infos
            if not info.is_directory
        ],
        limits,
    )


def _list_rar(volumes: list[Path], limits: _Limits) -> list[Entry]:
    # rarfile finds the next volumes by name in the same folder; listing needs no binary.
    try:
        with rarfile.RarFile(volumes[0]) as archive:
            if archive.needs_password() and not archive.infolist():
                raise PasswordProtected("The rar archive has encrypted headers; it needs a password.")
            infos = archive.infolist()
            _declared_count(len(infos), limits)
            return _checked(
                [
                    _entry(
                        info.filename,
                        info.file_size,
                        info.compress_size,
                        info.CRC,
                        link=info.is_symlink() or getattr(info, "file_redir", None) is not None,
                        limits=limits,
                        encrypted=info.needs_password(),
                    )
                    for info in infos
                    if not info.is_dir()
                ],
                limits,
            )
    except rarfile.PasswordRequired:
        raise PasswordProtected("The rar archive has encrypted headers; it needs a password.") from None
    except rarfile.NeedFirstVolume:
        raise ListingError("The first volume of the rar set is missing.") from None


def _list_remote(archive_type: str, volumes: list[RemoteVolume], limits: _Limits, range_bytes: int) -> list[Entry]:
    """The same readers over ranged reads: a volume set is one joined stream (zip's split sets in their
    .z01… .zip order; .001 sets and 7z volumes are plain byte splits, in name order)."""
    if archive_type == ZIP and not volumes[0].name.lower().endswith(".001"):
        volumes = sorted(volumes, key=lambda volume: _split_zip_order(Path(volume.name)))
    else:
        volumes = sorted(volumes, key=lambda volume: volume.name)
    with _JoinedVolumes([_RangedReader(volume) for volume in volumes]) as joined:
        stream = io.BufferedReader(joined, buffer_size=range_bytes)
        if archive_type == ZIP:
            return _zip_entries(stream, limits)
        if archive_type == SEVEN_ZIP:
            try:
                with py7zr.SevenZipFile(stream, mode="r") as archive:
                    return _7z_entries(archive, limits)
            except py7zr.exceptions.PasswordRequired:
                raise PasswordProtected("The 7z archive has encrypted headers; it needs a password.") from None
        if len(volumes) > 1 and all(_rar_volume_named(volume) for volume in volumes):
            return _list_rar_set_remote(volumes, limits, range_bytes)
        return _list_rar([stream], limits)


RANGE_BYTES = 256 * 1024  # one ranged read: a few headers' worth, not the payload


def _rar_volume_named(volume: RemoteVolume) -> bool:
    kind = classify(Path(volume.name).name)
    return kind is not None and kind.archive_type == RAR and kind.scheme in ("part", "old-rar", "single")


def _list_rar_set_remote(volumes: list[RemoteVolume], limits: _Limits, range_bytes: int) -> list[Entry]:
    """A RAR set read in place. rarfile walks each volume's headers block to block, seeks past the data, and
    opens the next volume by the name it derives: in this child its `open` answers those names with ranged
    readers. A volume it asks for that is not in the set fails the listing (rarfile would stop quietly)."""
    by_name = {Path(volume.name).name: volume for volume in volumes}
    asked_for_missing = []

    def open_volume(name, mode="rb", buffering=-1):
        volume = by_name.get(os.path.basename(str(name)))
        if volume is None:
            asked_for_missing.append(os.path.basename(str(name)))
            raise FileNotFoundError(name)
        return io.BufferedReader(_RangedReader(volume), buffer_size=range_bytes)

    first = min(by_name, key=lambda name: classify(name).order)
    rarfile.open = open_volume  # rarfile's XFile opens volumes by name with the builtin
    try:
        entries = _list_rar([first], limits)
    finally:
        del rarfile.open
    if asked_for_missing:
        raise ListingError(f"The rar set goes on in {asked_for_missing[0]}, which is not one of its volumes.")
    return entries


class _RangedReader(io.RawIOBase):
    """One object read by HTTP range requests on one kept-alive connection; `fetched` counts the bytes."""

    def __init__(self, volume: RemoteVolume):
        parts = urlsplit(volume.url)
        connection = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
        self.connection = connection(parts.hostname, parts.port, timeout=30)
        self.target = parts.path + (f"?{parts.query}" if parts.query else "")
        self.name = volume.name
        self.size = volume.size
        self.position = 0
        self.fetched = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = max(0, base + offset)
        return self.position

    def tell(self) -> int:
        return self.position

    def readinto(self, buffer) -> int:
        count = min(len(buffer), self.size - self.position)
        if count <= 0:
            return 0
        end = self.position + count - 1
        self.connection.request("GET", self.target, headers={"Range": f"bytes={self.position}-{end}"})
        answer = self.connection.getresponse()
        data = answer.read()
        if answer.status != 206 or len(data) != count:
            raise ListingError(
                f"The object store answered HTTP {answer.status} ({len(data)} bytes) for bytes {self.position}-{end} "
                f"of {self.name}."
            )
        buffer[:count] = data
        self.position += count
        self.fetched += count
        return count

    def close(self) -> None:
        self.connection.close()
        super().close()


def _volume_base(first_volume: Path) -> Path:
    """multivolumefile opens `name.7z` from `name.7z.001`, `name.7z.002`…"""
    return first_volume.with_name(first_volume.name[: -len(".001")])


if __name__ == "__main__":
    # `python -m packages.archives < REQUEST_JSON`: the listing child; one JSON answer on stdout.
    sys.stdout.write(json.dumps(_child_main(json.loads(sys.stdin.read()))))
