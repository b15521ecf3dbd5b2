"""Parallel file transfers through the Telethon gateway: several parts in flight over several connections,
each connection at its own rate, the account's bandwidth shared by all of them, and lost upload parts."""

import asyncio
import dataclasses
import hashlib
import time
from contextlib import aclosing

import pytest
from telethon import errors, functions, types
from telethon.extensions import BinaryReader
from telethon.sessions import StringSession

from telegram.errors import TransientError
from telegram.records import PART_SIZE
from telegram.telethon import client as client_module
from telegram.telethon.client import StashcastClient
from telegram.telethon.transfers import GetFile
from tests.support.sandbox import ref

READER, WRITER = "+15550000001", "+15550000002"
SIZE = 4 * PART_SIZE + 1000  # five parts, the last one short


def transfer_world(*, rate=None, bandwidth=None, rtt_ms=0, faults=()):
    return {
        "network": {"rtt_ms": rtt_ms, "connection_bytes_per_s": rate or 0},
        "accounts": [{"phone": READER, "bandwidth_bytes_per_s": bandwidth}, {"phone": WRITER}],
        "chats": [
            {"id": 7, "members": [READER], "messages": [{"id": 1, "document": {"name": "a.bin", "size": SIZE}}]},
            {"id": 8, "type": "channel", "admins": [WRITER]},
        ],
        "faults": list(faults),
    }


async def timed_download(gateway, *, offset=0):
    message = (await gateway.get_messages(ref(READER, 7), [1]))[1]
    started = time.monotonic()
    data = b"".join([chunk async for chunk in gateway.iter_download(ref(READER, 7), message.document, offset=offset)])
    return data, time.monotonic() - started


def part_connections(world, phone) -> int:
    """Connections the account opened besides its client's own (each starts with one help.getConfig)."""
    return world.stats()["connecting"].get(phone, {}).get("help.getConfig", 0) - 1


def set_transfer(settings, *, parts, connections, account_parts=16):
    settings.TRANSFER_PARTS_IN_FLIGHT = parts
    settings.TRANSFER_CONNECTIONS = connections
    settings.TRANSFER_ACCOUNT_PARTS_IN_FLIGHT = account_parts


def test_parts_in_flight_over_several_connections_arrive_whole_and_in_order(sandbox, sandbox_run, settings):
    set_transfer(settings, parts=4, connections=4)
    world = sandbox(transfer_world(rate=2_000_000))
    expected = world.message_bytes(7, 1)

    data, elapsed = sandbox_run(world, READER, timed_download)

    assert hashlib.sha256(data).hexdigest() == hashlib.sha256(expected).hexdigest()
    assert world.stats()["calls"][READER]["upload.getFile"] == 5, "one request a part"
    assert part_connections(world, READER) == 3, "the client's own connection and three more"
    # One connection at 2 MB/s needs 1.05 s for these bytes; four of them share the five parts.
    assert elapsed < 0.75


def test_a_file_in_another_data_centre_is_fetched_through_one_exported_login(sandbox, sandbox_run, settings):
    set_transfer(settings, parts=4, connections=3)
    world = sandbox(transfer_world())

    async def from_dc_4(gateway):
        message = (await gateway.get_messages(ref(READER, 7), [1]))[1]
        document = dataclasses.replace(message.document, location={**message.document.location, "dc_id": 4})
        return b"".join([chunk async for chunk in gateway.iter_download(ref(READER, 7), document)])

    data = sandbox_run(world, READER, from_dc_4)

    assert data == world.message_bytes(7, 1)
    calls = world.stats()["calls"][READER]
    assert (calls["auth.exportAuthorization"], calls["auth.importAuthorization"]) == (1, 1), "one login exported"
    assert part_connections(world, READER) == 2, "two more connections share the exported key"


def test_one_part_in_flight_is_one_connection_one_part_at_a_time(sandbox, sandbox_run, settings):
    set_transfer(settings, parts=1, connections=4)
    world = sandbox(transfer_world(rate=2_000_000))

    data, elapsed = sandbox_run(world, READER, timed_download)

    assert data == world.message_bytes(7, 1)
    assert part_connections(world, READER) == 0
    assert elapsed >= SIZE / 2_000_000


def test_the_account_bandwidth_binds_however_many_connections(sandbox, sandbox_run, settings):
    set_transfer(settings, parts=8, connections=4)
    world = sandbox(transfer_world(rate=5_000_000, bandwidth=1_000_000))

    data, elapsed = sandbox_run(world, READER, timed_download)

    assert len(data) == SIZE
    assert elapsed >= 0.95 * SIZE / 1_000_000, "four connections at 5 MB/s still share the account's 1 MB/s"


def test_the_bound_per_account_holds_parts_of_every_transfer(sandbox, sandbox_run, settings):
    # 4 parts a file but 1 for the whole account: two files at once go one part at a time over one link.
    set_transfer(settings, parts=4, connections=1, account_parts=1)
    world = sandbox(transfer_world(rtt_ms=100))

    async def two_at_once(gateway):
        started = time.monotonic()
        first, second = await asyncio.gather(timed_download(gateway), timed_download(gateway))
        return first[0], second[0], time.monotonic() - started

    first, second, elapsed = sandbox_run(world, READER, two_at_once)

    assert first == second == world.message_bytes(7, 1)
    assert elapsed >= 10 * 0.1, "ten parts, one round trip each, never two at once"


def test_a_resumed_download_starts_at_its_part_and_drops_what_is_held(sandbox, sandbox_run, settings):
    set_transfer(settings, parts=4, connections=2)
    world = sandbox(transfer_world())
    offset = 2 * PART_SIZE + 10

    data, _ = sandbox_run(world, READER, lambda gateway: timed_download(gateway, offset=offset))

    assert data == world.message_bytes(7, 1)[offset:]
    assert world.stats()["calls"][READER]["upload.getFile"] == 3


@pytest.mark.parametrize(
    ("offset", "length", "requests"),
    [
        (0, 32, 1),  # a 7z start header: one 4 KiB request
        (SIZE - 64, 64, 1),  # a RAR end block: the last 4 KiB of the file
        (1024 * 1024 - 100, 300, 2),  # across a 1 MiB boundary, which no request may cross
        (SIZE - 65_557, 65_557, 2),  # a zip's longest tail, in the largest requests the rules allow
        (SIZE - 10, 500, 1),  # past the end: what there is
    ],
)
def test_a_range_is_read_where_it_lies_in_few_requests(sandbox, sandbox_run, settings, offset, length, requests):
    world = sandbox(transfer_world())

    async def read(gateway):
        message = (await gateway.get_messages(ref(READER, 7), [1]))[1]
        return await gateway.read_range(ref(READER, 7), message.document, offset=offset, length=length)

    data = sandbox_run(world, READER, read)

    assert data == world.message_bytes(7, 1)[offset : offset + length]
    assert world.stats()["calls"][READER]["upload.getFile"] == requests


def test_a_part_that_keeps_failing_ends_the_download_with_nothing_left_in_flight(sandbox, sandbox_run, settings):
    set_transfer(settings, parts=4, connections=2)
    world = sandbox(transfer_world(rtt_ms=50, faults=[{"op": "download", "error": "network", "after": 1, "times": 5}]))

    async def download_until_it_fails(gateway):
        message = (await gateway.get_messages(ref(READER, 7), [1]))[1]
        received = []
        with pytest.raises(TransientError):
            async with aclosing(gateway.iter_download(ref(READER, 7), message.document)) as chunks:
                async for chunk in chunks:
                    received.append(chunk)
        requests = world.stats()["calls"][READER]["upload.getFile"]
        await asyncio.sleep(0.3)  # anything still in flight would be counted by now
        return received, requests, world.stats()["calls"][READER]["upload.getFile"]

    received, requests, later = sandbox_run(world, READER, download_until_it_fails)

    assert b"".join(received) == world.message_bytes(7, 1)[: len(b"".join(received))], "what came is in order"
    assert later == requests, "the parts in flight were cancelled"


def test_an_upload_saves_its_parts_in_parallel_and_posts_the_whole_file(sandbox, sandbox_run, settings, tmp_path):
    set_transfer(settings, parts=4, connections=4)
    world = sandbox(transfer_world(rate=2_000_000))
    path = tmp_path / "big.bin"
    payload = hashlib.sha256(b"seed").digest() * (21 * PART_SIZE // 32 + 7)  # above 10 MB: saveBigFilePart
    path.write_bytes(payload)

    async def upload(gateway):
        started = time.monotonic()
        sent = await gateway.upload_document(ref(WRITER, 8), path=str(path), file_name="big.bin", random_id=5)
        return sent, time.monotonic() - started

    sent, elapsed = sandbox_run(world, WRITER, upload)

    (message,) = [m for m in world.chat_dump(8)["messages"] if m["id"] == sent.id]
    assert message["document"] == {
        "name": "big.bin",
        "size": len(payload),
        "sha256": hashlib.sha256(payload).hexdigest(),
    }
    assert world.stats()["calls"][WRITER]["upload.saveBigFilePart"] == 22
    assert part_connections(world, WRITER) == 3
    assert elapsed < 0.5 * len(payload) / 2_000_000, "four links at once, not one"


@pytest.mark.parametrize("size", [3 * PART_SIZE, 21 * PART_SIZE])
def test_a_part_telegram_lost_is_sent_again_when_it_asks(sandbox, sandbox_run, settings, tmp_path, size):
    set_transfer(settings, parts=4, connections=2)
    world = sandbox(transfer_world(faults=[{"op": "upload", "error": "part_lost", "after": 1, "times": 1}]))
    path = tmp_path / "file.bin"
    payload = bytes(range(256)) * (size // 256)
    path.write_bytes(payload)

    sent = sandbox_run(
        world,
        WRITER,
        lambda gateway: gateway.upload_document(ref(WRITER, 8), path=str(path), file_name="file.bin", random_id=9),
    )

    (message,) = [m for m in world.chat_dump(8)["messages"] if m["id"] == sent.id]
    assert message["document"]["sha256"] == hashlib.sha256(payload).hexdigest()
    method = "upload.saveBigFilePart" if size > 10 * 1024 * 1024 else "upload.saveFilePart"
    parts = size // PART_SIZE
    assert world.stats()["calls"][WRITER][method] == parts + 1, "the lost part went once more, nothing else"
    assert world.stats()["calls"][WRITER]["messages.sendMedia"] == 2


class PartConnection:
    """A connection whose answers are given: the sandbox server never answers with Telegram's internal errors."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.sent = []

    def send(self, request):
        self.sent.append(request)
        answer = self.answers.pop(0)

        async def reply():
            if isinstance(answer, BaseException):
                raise answer
            return answer

        return asyncio.ensure_future(reply())


def file_part_call(connection: PartConnection, request=None):
    client = StashcastClient(StringSession(), 1, "hash", request_retries=2)
    request = request or functions.upload.SaveBigFilePartRequest(file_id=1, file_part=0, file_total_parts=1, bytes=b"x")

    async def call():
        try:
            return await client.call_file_part(connection, request)
        finally:
            connection.requests_sent = client.requests_sent

    return asyncio.run(call())


def test_a_file_part_goes_to_its_connection_as_itself_and_is_counted():
    connection = PartConnection(True)
    request = functions.upload.GetFileRequest(types.InputDocumentFileLocation(1, 2, b"", ""), 0, PART_SIZE)

    assert file_part_call(connection, request) is True
    assert connection.sent == [request], "no invokeWithoutUpdates around it: file queries never subscribe to updates"
    assert connection.requests_sent == 1


def test_telegram_internal_errors_on_a_part_are_tried_again_once(monkeypatch):
    monkeypatch.setattr(client_module, "INTERNAL_ERROR_PAUSE_SECONDS", 0)
    recovers = PartConnection(errors.RpcCallFailError(request=None), True)
    keeps_failing = PartConnection(
        errors.ServerError(request=None, message="NO_WORKERS_RUNNING", code=-500), errors.RpcCallFailError(request=None)
    )

    assert file_part_call(recovers) is True
    with pytest.raises(errors.RpcCallFailError):
        file_part_call(keeps_failing)
    assert (recovers.requests_sent, keeps_failing.requests_sent) == (2, 2)


def test_a_flood_wait_on_a_part_is_left_to_the_caller():
    connection = PartConnection(errors.FloodWaitError(request=None, capture=30), True)

    with pytest.raises(errors.FloodWaitError):
        file_part_call(connection)
    assert len(connection.sent) == 1


@pytest.mark.parametrize("size", [0, 3, 253, 254, PART_SIZE])
def test_a_part_is_read_from_its_answer_as_telegram_wrote_it(size):
    answer = types.upload.File(
        type=types.storage.FileJpeg(), mtime=1700000000, bytes=bytes(range(256)) * (size // 256) + bytes(size % 256)
    )
    with BinaryReader(bytes(answer) + b"next") as reader:
        read = GetFile.read_result(reader)
        assert reader.read(4) == b"next", "the reader stands after the answer, padding included"
    assert isinstance(read.bytes, memoryview) and bytes(read.bytes) == answer.bytes
    assert (type(read.type), read.mtime) == (types.storage.FileJpeg, 1700000000)


def test_an_answer_that_is_not_the_file_is_read_as_telethon_reads_it():
    redirect = types.upload.FileCdnRedirect(
        dc_id=2, file_token=b"t", encryption_key=b"k" * 32, encryption_iv=b"i" * 16, file_hashes=[]
    )
    with BinaryReader(bytes(redirect)) as reader:
        assert GetFile.read_result(reader) == redirect


def test_every_part_request_of_a_file_is_its_location_and_its_own_offset():
    location = types.InputDocumentFileLocation(id=5, access_hash=6, file_reference=b"ref", thumb_size="")
    head = GetFile.head_for(location)
    for offset in (0, PART_SIZE, 7 * PART_SIZE):
        own = bytes(functions.upload.GetFileRequest(location, offset=offset, limit=PART_SIZE))
        assert bytes(GetFile(location, offset=offset, limit=PART_SIZE, head=head)) == own


def _open_connections(world, phone) -> int:
    with world.transaction() as conn:
        return conn.execute("SELECT COUNT(*) FROM connections WHERE phone = ?", (phone,)).fetchone()[0]


@pytest.mark.parametrize("cancel_after", [0.35, 0.45, 0.55, 0.65, 0.75])
def test_a_transfer_cancelled_while_its_connections_open_leaves_none_open(sandbox, sandbox_run, settings, cancel_after):
    """A run that loses its lock cancels its transfer wherever it is, also while a part connection is being
    started: a connection nobody closes keeps the account's key in use after its lease is given up, and the next
    process to take the session would share it."""
    set_transfer(settings, parts=4, connections=4)
    world = sandbox(transfer_world(rtt_ms=200))

    async def cancelled(gateway):
        transfer = asyncio.ensure_future(timed_download(gateway))
        await asyncio.sleep(cancel_after)
        transfer.cancel()
        with pytest.raises(asyncio.CancelledError):
            await transfer

    sandbox_run(world, READER, cancelled)

    assert _open_connections(world, READER) == 0
