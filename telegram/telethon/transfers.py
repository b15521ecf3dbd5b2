"""File transfers with several parts in flight, over several connections to the file's data centre.

Telegram serves each connection at its own pace, so one connection with one part in flight moves one part
per round trip. As Telegram's own apps do, a transfer keeps `parts_in_flight` parts requested at once,
spread over up to `connections` connections of the account to the data centre that holds the file: the
client's own connection for its home data centre plus further MTProto sessions of the same authorization
key, and for another data centre an exported authorization (Telethon's `_create_exported_sender`) whose key
the further connections share. Parts of all the account's transfers together stay under one bound, and
each part asks the account's transfer budget (its bandwidth cap, its hours) for its bytes before it goes.
"""

import asyncio
import hashlib
import math
import mmap
import os
import struct
from collections.abc import AsyncIterator, Awaitable, Callable

from telethon import functions, helpers, types
from telethon.crypto import AuthKey

from telegram.errors import TransientError
from telegram.records import PART_SIZE

SMALL_FILE_MAX_BYTES = 10 * 1024 * 1024  # above this, Telegram wants upload.saveBigFilePart
READ_BLOCK = 8 * 1024 * 1024  # the staged file is read in large blocks, then cut into parts


class SenderPool:
    """The connections one account opens for file parts, per data centre, its bound on parts in flight, and its
    transfer budget: awaited with each part's bytes before the part goes (it may wait, or raise to stop)."""

    def __init__(
        self,
        client,
        *,
        connections: int,
        account_parts_in_flight: int,
        budget: Callable[[int], Awaitable[None]] | None = None,
    ):
        self._client = client
        self.connections = connections
        self.parts = asyncio.Semaphore(account_parts_in_flight)
        self._senders: dict[int, list] = {}
        self._lock = asyncio.Lock()
        self._budget = budget

    async def spend(self, size: int) -> None:
        if self._budget is not None:
            await self._budget(size)

    async def senders(self, dc_id: int, wanted: int) -> list:
        """Up to `wanted` connections (at most the pool's size) to `dc_id`, opened on first use."""
        wanted = max(1, min(wanted, self.connections))
        async with self._lock:
            pool = self._senders.setdefault(dc_id, [])
            while len(pool) < wanted:
                pool.append(await self._open(dc_id, pool))
            return pool[:wanted]

    async def _open(self, dc_id: int, pool: list):
        client = self._client
        if not pool:
            if dc_id == client.session.dc_id:
                return client._sender
            return await client._create_exported_sender(dc_id)
        # One more session of the key the first connection is logged in with: no new login, no new export.
        return await client._open_part_sender(dc_id, AuthKey(pool[0].auth_key.key))

    async def close(self) -> None:
        async with self._lock:
            senders = [sender for pool in self._senders.values() for sender in pool]
            self._senders.clear()
        for sender in senders:
            if sender is not self._client._sender:
                await sender.disconnect()


async def download(
    client, pool: SenderPool, location, *, dc_id: int, size: int, first_part: int, parts_in_flight: int
) -> AsyncIterator[memoryview]:
    """The file's parts from `first_part` on, in order, with up to `parts_in_flight` requested at once; each a
    view of the message it came in (`GetFile`).

    Parts arriving out of order wait in memory (at most `parts_in_flight` of them), so the caller can hash
    and write them in one pass in order. Use with `contextlib.aclosing`: closing cancels what is in flight.
    """
    last_part = math.ceil(size / PART_SIZE)
    senders = await pool.senders(dc_id, parts_in_flight)
    in_flight: dict[int, asyncio.Future] = {}

    head = GetFile.head_for(location)

    async def fetch(index: int) -> memoryview:
        request = GetFile(location, offset=index * PART_SIZE, limit=PART_SIZE, head=head)
        async with pool.parts:
            await pool.spend(min(PART_SIZE, size - index * PART_SIZE))
            return (await client.call_file_part(senders[index % len(senders)], request)).bytes

    requested = first_part
    try:
        for index in range(first_part, last_part):
            while requested < last_part and requested < index + parts_in_flight:
                in_flight[requested] = asyncio.ensure_future(fetch(requested))
                requested += 1
            data = await in_flight.pop(index)
            if data:
                yield data
            if len(data) < PART_SIZE:
                return
    finally:
        await _cancel(in_flight.values())


async def upload(
    client, pool: SenderPool, path: str, *, file_name: str, parts_in_flight: int
) -> types.InputFile | types.InputFileBig:
    """Save the file's parts with up to `parts_in_flight` in flight; returns what a send refers to it by
    (`resave` sends one part of it again, for Telegram's FILE_PART_X_MISSING)."""
    size = os.path.getsize(path)
    part_count = math.ceil(size / PART_SIZE)
    big = size > SMALL_FILE_MAX_BYTES
    file_id = helpers.generate_random_long()
    md5 = None if big else hashlib.md5(usedforsecurity=False)
    senders = await pool.senders(client.session.dc_id, parts_in_flight)
    save = _part_saver(client, pool, senders, part_count=part_count)
    in_flight: set[asyncio.Future] = set()
    try:
        for index, data in enumerate(_parts(path)):
            if md5 is not None:
                md5.update(data)
            while len(in_flight) >= parts_in_flight:
                done, in_flight = await asyncio.wait(in_flight, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    task.result()
            # Made now: `data` is a view of the read block, which the next read overwrites.
            request = _part_request(file_id, index, part_count, data, big=big)
            in_flight.add(asyncio.ensure_future(save(index, request)))
        for task in asyncio.as_completed(list(in_flight)):
            await task
        in_flight.clear()
    finally:
        await _cancel(in_flight)
    if big:
        return types.InputFileBig(id=file_id, parts=part_count, name=file_name)
    return types.InputFile(id=file_id, parts=part_count, name=file_name, md5_checksum=md5.hexdigest())


async def resave(client, pool: SenderPool, path: str, uploaded, index: int) -> None:
    """Send part `index` of an uploaded file again (Telegram answered FILE_PART_{index}_MISSING)."""
    if not 0 <= index < uploaded.parts:
        raise TransientError(f"Telegram asked again for part {index} of a file of {uploaded.parts} parts.")
    with open(path, "rb") as file:
        file.seek(index * PART_SIZE)
        data = file.read(PART_SIZE)
    senders = await pool.senders(client.session.dc_id, 1)
    big = isinstance(uploaded, types.InputFileBig)
    save = _part_saver(client, pool, senders, part_count=uploaded.parts)
    await save(index, _part_request(uploaded.id, index, uploaded.parts, memoryview(data), big=big))


def _part_saver(client, pool: SenderPool, senders: list, *, part_count: int) -> Callable:
    async def save(index: int, request) -> None:
        async with pool.parts:
            await pool.spend(len(request.bytes))
            saved = await client.call_file_part(senders[index % len(senders)], request)
        if not saved:
            raise TransientError(f"Telegram did not keep part {index} of {part_count}.")

    return save


def _parts(path: str):
    """The file's PART_SIZE parts, as views of READ_BLOCK reads (valid until the next part is asked for) that
    bypass the page cache where the system allows (O_DIRECT): a staged download was written that way, and
    copying it through the cache costs more CPU than hashing it."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECT", 0))
    except OSError:  # tmpfs and some others refuse O_DIRECT
        fd = os.open(path, os.O_RDONLY)
    block = mmap.mmap(-1, READ_BLOCK)  # page-aligned, as O_DIRECT needs
    try:
        size, offset = os.fstat(fd).st_size, 0
        while offset < size:
            wanted = min(READ_BLOCK, size - offset)
            if os.preadv(fd, [block], offset) != wanted:
                raise OSError(f"{path} changed while it was read for an upload")
            with memoryview(block) as view:
                for start in range(0, wanted, PART_SIZE):
                    with view[start : min(start + PART_SIZE, wanted)] as part:
                        yield part
            offset += wanted
    finally:
        os.close(fd)
        block.close()


# upload.file's storage.FileType: constructors without fields.
FILE_TYPES = {
    cls.CONSTRUCTOR_ID: cls
    for cls in (
        types.storage.FileUnknown,
        types.storage.FilePartial,
        types.storage.FileJpeg,
        types.storage.FileGif,
        types.storage.FilePng,
        types.storage.FilePdf,
        types.storage.FileMp3,
        types.storage.FileMov,
        types.storage.FileMp4,
        types.storage.FileWebp,
    )
}
OFFSET_AND_LIMIT = struct.Struct("<qi")  # how upload.getFile ends
ALIGN = 4096  # upload.getFile: offset and limit multiples of 4 KiB,
WINDOW = 1024 * 1024  # a limit dividing 1 MiB, and no request crossing a 1 MiB boundary


async def read_range(client, pool: SenderPool, location, *, dc_id: int, offset: int, length: int) -> bytes:
    """`length` bytes of a file from `offset` (fewer at its end) in as few getFile requests as Telegram's rules
    allow: a header or a directory is read where it lies, not by downloading the file up to it."""
    (sender,) = await pool.senders(dc_id, 1)
    head = GetFile.head_for(location)
    start, end = offset - offset % ALIGN, offset + length
    chunks = []
    while start < end:
        limit = ALIGN
        while limit < WINDOW and start % (limit * 2) == 0 and start + limit < end:
            limit *= 2
        async with pool.parts:
            await pool.spend(limit)
            data = (await client.call_file_part(sender, GetFile(location, offset=start, limit=limit, head=head))).bytes
        chunks.append(bytes(data))
        if len(data) < limit:
            break
        start += limit
    return b"".join(chunks)[offset % ALIGN :][:length]


FILE_HEAD = struct.Struct("<IIiB")  # upload.file, its type, mtime, and the first byte of its bytes' length


class GetFile(functions.upload.GetFileRequest):
    """upload.getFile for one part of a file read part after part. Every part's request begins the same (the
    file's location, serialized once: `head_for`); the answer's bytes are a view of the message they came in
    rather than a copy: a part is hashed and staged from there (Telethon's reader would copy each 512 KiB once
    more)."""

    def __init__(self, location, *, offset: int, limit: int, head: bytes):
        super().__init__(location, offset=offset, limit=limit)
        self._head = head

    @staticmethod
    def head_for(location) -> bytes:
        """What every part's request of the file at `location` begins with: all but its offset and limit."""
        return bytes(functions.upload.GetFileRequest(location, offset=0, limit=0))[: -OFFSET_AND_LIMIT.size]

    def _bytes(self) -> bytes:
        return self._head + OFFSET_AND_LIMIT.pack(self.offset, self.limit)

    @staticmethod
    def read_result(reader):
        stream, start = reader.stream, reader.tell_position()
        constructor, file_type, mtime, length = FILE_HEAD.unpack_from(stream, start)
        if constructor != types.upload.File.CONSTRUCTOR_ID or file_type not in FILE_TYPES:
            return reader.tgread_object()
        position = start + FILE_HEAD.size
        if length == 254:
            length = int.from_bytes(stream[position : position + 3], "little")
            position += 3
            padding = -length % 4
        else:
            padding = -(length + 1) % 4
        if position + length > len(stream):
            raise BufferError(f"upload.file announced {length} bytes, fewer came")
        reader.set_position(position + length + padding)
        data = memoryview(stream)[position : position + length]
        return types.upload.File(type=FILE_TYPES[file_type](), mtime=mtime, bytes=data)


def _tl_bytes(length: int) -> tuple[bytes, bytes]:
    """The length prefix and the padding TL puts around a byte string of `length`."""
    if length < 254:
        return bytes([length]), bytes(-(length + 1) % 4)
    return b"\xfe" + length.to_bytes(3, "little"), bytes(-length % 4)


class SaveBigFilePart(functions.upload.SaveBigFilePartRequest):
    """upload.saveBigFilePart, serialized once from the block its part was read into: Telethon's own
    serializing copies each 512 KiB part three times, and at 2,048 parts a GiB the copies cost a fifth of
    the CPU of hashing the file. The same bytes go on the wire; `bytes` is a view of them."""

    def __init__(self, file_id: int, file_part: int, file_total_parts: int, data: memoryview):
        head = struct.pack("<Iqii", self.CONSTRUCTOR_ID, file_id, file_part, file_total_parts)
        self._serialized = _serialized(head, data)
        super().__init__(file_id, file_part, file_total_parts, _payload(self._serialized, head, data))

    def _bytes(self) -> bytes:
        return self._serialized


class SaveFilePart(functions.upload.SaveFilePartRequest):
    """upload.saveFilePart (files up to 10 MB), serialized once as SaveBigFilePart is."""

    def __init__(self, file_id: int, file_part: int, data: memoryview):
        head = struct.pack("<Iqi", self.CONSTRUCTOR_ID, file_id, file_part)
        self._serialized = _serialized(head, data)
        super().__init__(file_id, file_part, _payload(self._serialized, head, data))

    def _bytes(self) -> bytes:
        return self._serialized


def _serialized(head: bytes, data: memoryview) -> bytes:
    prefix, padding = _tl_bytes(len(data))
    return b"".join((head, prefix, data, padding))


def _payload(serialized: bytes, head: bytes, data: memoryview) -> memoryview:
    start = len(head) + len(_tl_bytes(len(data))[0])
    return memoryview(serialized)[start : start + len(data)]


def _part_request(file_id: int, index: int, part_count: int, data: memoryview, *, big: bool):
    if big:
        return SaveBigFilePart(file_id, index, part_count, data)
    return SaveFilePart(file_id, index, data)


async def _cancel(tasks) -> None:
    tasks = list(tasks)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
