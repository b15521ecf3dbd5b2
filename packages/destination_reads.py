"""A package's listing read from its documents in the destination channel, where they lie.

The listing child reads a remote volume by HTTP range requests (`packages.archives.RemoteVolume`); here the
store is Telegram. For one gateway session a server on the loopback interface answers each range with
`gateway.read_range` (upload.getFile at that offset), so the child reads a zip's central directory, a 7z's
end header or each RAR volume's headers block to block, never the whole file. A volume uploaded as several
byte-split parts is served as one. A RAR set that cannot be walked in place (its volumes go on under names
that are not the set's) is queued and read in full after the others: those reads are counted apart.
"""

import asyncio
import secrets
import tempfile
import threading
from contextlib import aclosing
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from packages.archives import RemoteVolume
from packages.detection import RAR
from packages.services import PackageListing, package_listing_read
from telegram.errors import TelegramError
from telegram.gateway import TelegramGateway
from telegram.records import ChatRef, DocumentMessage

# One range the child asks for: Telegram serves 64 KiB windows in one request, and a zip's central directory
# or a 7z's end header is seldom longer.
RANGE_BYTES = 64 * 1024
RANGE_TIMEOUT_SECONDS = 120


@dataclass(frozen=True)
class DestinationVolume:
    """One volume of a package as it lies in the destination: its name, and its documents (byte-split parts)."""

    name: str
    parts: tuple[DocumentMessage, ...]

    @property
    def size(self) -> int:
        return sum(part.document.size for part in self.parts)


@dataclass(frozen=True)
class ListingJob:
    key: int  # the caller's (a package's primary key)
    archive_type: str
    volumes: tuple[DestinationVolume, ...]

    @property
    def size(self) -> int:
        return sum(volume.size for volume in self.volumes)

    @property
    def rar_set(self) -> bool:
        return self.archive_type == RAR and len(self.volumes) > 1


@dataclass
class ListingRead:
    listing: PackageListing | None  # None: Telegram would not give the bytes (`trouble` says why)
    bytes_read: int
    full_read: bool
    trouble: str = ""


@dataclass
class _Served:
    volume: DestinationVolume
    bytes_read: int = 0
    trouble: list[str] = field(default_factory=list)


class _RangeServer:
    """Ranges of destination volumes over HTTP on 127.0.0.1, each volume behind a secret path, for one session."""

    def __init__(self, gateway: TelegramGateway, ref: ChatRef, loop: asyncio.AbstractEventLoop):
        self.gateway, self.ref, self.loop = gateway, ref, loop
        self.token = secrets.token_urlsafe(16)
        self.served: dict[str, _Served] = {}
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # the child keeps one connection per volume

            def do_GET(self):
                server.answer(self)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, name="destination-ranges", daemon=True)

    def __enter__(self) -> "_RangeServer":
        self.thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def remote(self, served: _Served) -> RemoteVolume:
        key = secrets.token_urlsafe(8)
        self.served[key] = served
        port = self.httpd.server_address[1]
        return RemoteVolume(served.volume.name, f"http://127.0.0.1:{port}/{self.token}/{key}", served.volume.size)

    def answer(self, request: BaseHTTPRequestHandler) -> None:
        _, token, key = (request.path.split("/") + ["", ""])[:3]
        served = self.served.get(key) if secrets.compare_digest(token, self.token) else None
        first, last = _range(request.headers.get("Range", ""))
        if served is None or first is None or first >= served.volume.size:
            request.send_error(404 if served is None else 416)
            return
        last = min(last, served.volume.size - 1)
        reading = asyncio.run_coroutine_threadsafe(self.read(served, first, last - first + 1), self.loop)
        try:
            data = reading.result(timeout=RANGE_TIMEOUT_SECONDS)
        except (TelegramError, TimeoutError) as exc:
            served.trouble.append(str(exc) or exc.__class__.__name__)
            request.send_error(502)
            return
        request.send_response(206)
        request.send_header("Content-Length", str(len(data)))
        request.send_header("Content-Range", f"bytes {first}-{first + len(data) - 1}/{served.volume.size}")
        request.end_headers()
        request.wfile.write(data)

    async def read(self, served: _Served, offset: int, length: int) -> bytes:
        """The bytes of the volume from offset, from each part they fall in."""
        chunks, start = [], 0
        for part in served.volume.parts:
            size = part.document.size
            if offset < start + size and offset + length > start:
                begin = max(offset, start) - start
                end = min(offset + length, start + size) - start
                chunks.append(await self.gateway.read_range(self.ref, part.document, offset=begin, length=end - begin))
            start += size
        data = b"".join(chunks)
        served.bytes_read += len(data)
        return data


def _range(header: str) -> tuple[int | None, int]:
    """(first, last) of `bytes=first-last`; (None, 0) for anything else."""
    unit, _, span = header.partition("=")
    first, _, last = span.partition("-")
    if unit.strip() != "bytes" or not first.isdecimal() or not last.isdecimal() or int(last) < int(first):
        return None, 0
    return int(first), int(last)


async def listings_read(gateway: TelegramGateway, ref: ChatRef, jobs: list[ListingJob], *, on_progress=None):
    """Each job's listing, by ranged reads where they can list it, then the rest by full reads; `on_progress`
    (job, ListingRead, done, total) after each. Runs in the gateway's event loop; the ORM is not touched."""
    results: dict[int, ListingRead] = {}
    queued: list[ListingJob] = []  # RAR sets whose walk in place failed: read in full after the others
    with _RangeServer(gateway, ref, asyncio.get_running_loop()) as server:
        for job in jobs:
            read = await _ranged(server, job)
            error = read.listing.error if read.listing is not None else None
            if job.rar_set and error is not None and not error.needs_password:
                queued.append(job)
                continue
            results[job.key] = read
            if on_progress is not None:
                on_progress(job, read, len(results), len(jobs))
    for job in queued:
        results[job.key] = read = await _full(gateway, ref, job)
        if on_progress is not None:
            on_progress(job, read, len(results), len(jobs))
    return results


async def _ranged(server: _RangeServer, job: ListingJob) -> ListingRead:
    served = [_Served(volume) for volume in job.volumes]
    remote = [server.remote(item) for item in served]
    listing = await asyncio.to_thread(
        package_listing_read, archive_type=job.archive_type, volume_paths=remote, range_bytes=RANGE_BYTES
    )
    trouble = [text for item in served for text in item.trouble]
    read = sum(item.bytes_read for item in served)
    if trouble:
        return ListingRead(listing=None, bytes_read=read, full_read=False, trouble=trouble[0])
    return ListingRead(listing=listing, bytes_read=read, full_read=False)


async def _full(gateway: TelegramGateway, ref: ChatRef, job: ListingJob) -> ListingRead:
    read = 0
    with tempfile.TemporaryDirectory(prefix="stashcast-full-read-") as folder:
        paths = []
        try:
            for volume in job.volumes:
                path = Path(folder) / Path(volume.name).name
                with open(path, "wb") as sink:
                    for part in volume.parts:
                        async with aclosing(gateway.iter_download(ref, part.document)) as chunks:
                            async for chunk in chunks:
                                sink.write(chunk)
                                read += len(chunk)
                paths.append(path)
        except TelegramError as exc:
            return ListingRead(listing=None, bytes_read=read, full_read=True, trouble=str(exc))
        listing = await asyncio.to_thread(package_listing_read, archive_type=job.archive_type, volume_paths=paths)
    return ListingRead(listing=listing, bytes_read=read, full_read=True)
