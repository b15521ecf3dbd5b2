"""The network under a real Telethon client when it talks to the sandbox instead of Telegram.

`SandboxSender` stands where Telethon's MTProtoSender stands: each TL request is serialized,
answered by the sandbox server, and the answer is serialized to bytes and read back with the
request's own reader; Telegram's errors come back through Telethon's `rpc_message_to_error`, as
from the real sender. Everything above (retries, flood handling, `iter_download`, `upload_file`,
`sign_in` with SRP) is Telethon's own. Each request takes the world's round trip plus its bytes at
the connection's rate, and file bytes also pass the account's bandwidth.
"""

import asyncio
import os
import struct
import time

from telethon.crypto import AuthKey
from telethon.errors import rpc_message_to_error
from telethon.extensions import BinaryReader
from telethon.network import MTProtoSender
from telethon.tl import types

from telegram.errors import TransientError
from telegram.sandbox.faults import RpcAnswer
from telegram.sandbox.methods.bots import pushes_start, updates_pushed
from telegram.sandbox.server import SandboxServer, unwrap
from telegram.sandbox.world import World, WorldMissing
from telegram.telethon.client import StashcastClient

BOOL_TRUE, BOOL_FALSE, VECTOR = 0x997275B5, 0xBC799737, 0x1CB5C415
PUSH_POLL_SECONDS = 0.05  # how often a connection that takes updates looks for new ones in the world


def serialize(result) -> bytes:
    """A server answer as the bytes Telegram would send: a TL object, a vector or a bool."""
    if result is True or result is False:
        return struct.pack("<I", BOOL_TRUE if result else BOOL_FALSE)
    if isinstance(result, list):
        return struct.pack("<Ii", VECTOR, len(result)) + b"".join(serialize(item) for item in result)
    return bytes(result)


class SandboxSender:
    def __init__(
        self,
        auth_key: AuthKey | None,
        *,
        world_path,
        phone: str,
        auth_key_callback=None,
        updates_queue: asyncio.Queue | None = None,
        **_options,
    ):
        self.auth_key = auth_key or AuthKey(None)
        # Where a client that reads updates (a bot) gets them: pushed by the server, and its own sends' answers.
        self._updates_queue = updates_queue
        self._push_task: asyncio.Task | None = None
        self.connecting = False  # the owning client is inside connect(): its requests are counted apart
        self._world_path = world_path
        self._phone = phone
        self._auth_key_callback = auth_key_callback
        self._connection = None
        self._world: World | None = None
        self._server: SandboxServer | None = None
        self._connection_id: int | None = None
        self._dc_id = 0
        self._link_free_at = 0.0
        self._rtt = 0.0
        self._rate = 0

    # What TelegramClient uses of its sender

    async def connect(self, connection) -> bool:
        if self._world is not None:
            return False
        try:
            self._world = World(self._world_path)
        except WorldMissing as exc:
            # Already the taxonomy's error: its text says what to do, where a mapped ConnectionError would not.
            raise TransientError(str(exc)) from None
        self._server = SandboxServer(self._world)
        self._connection = connection
        self._dc_id = connection._dc_id
        if self.auth_key.key is None:  # as after Telegram's key exchange: a new, logged-out key
            self.auth_key.key = os.urandom(256)
            if self._auth_key_callback:
                await self._auth_key_callback(self.auth_key)
        key = self._world.key_open(self.key_id, self._dc_id)
        self._connection_id, shared = self._world.connection_open(key_id=self.key_id, phone=key["phone"] or self._phone)
        if shared and self._world.meta("auth_key_duplicated"):
            # Telegram kills a key used from two places at once: every holder gets AUTH_KEY_DUPLICATED.
            self._world.key_update(self.key_id, state="duplicated")
        self._rtt = self._world.meta("rtt_ms") / 1000
        self._rate = self._world.meta("connection_bytes_per_s")
        if self._updates_queue is not None:
            # Where pushes begin is decided now, at the connection: a login on it comes after.
            self._push_task = asyncio.create_task(self._push_loop(pushes_start(self._world, self.key_id)))
        return True

    async def _push_loop(self, after_seq: int | None) -> None:
        """Telegram pushes updates down a live connection: what people did, from the moment the key is a bot's.
        Updates sent before that come from updates.getDifference, as on Telegram."""
        while self._world is not None:
            found, after_seq = updates_pushed(self._world, self.key_id, after_seq=after_seq, dc_id=self._dc_id)
            for updates in found:
                self._updates_queue.put_nowait(updates)
            await asyncio.sleep(PUSH_POLL_SECONDS)

    def is_connected(self) -> bool:
        return self._world is not None

    def _transport_connected(self) -> bool:
        return self.is_connected()

    async def disconnect(self) -> None:
        if self._world is None:
            return
        if self._push_task is not None:
            self._push_task.cancel()
            self._push_task = None
        self._world.connection_close(self._connection_id)
        self._world.close()
        self._world = self._server = None

    @property
    def disconnected(self) -> asyncio.Future:
        future = asyncio.get_running_loop().create_future()
        if not self.is_connected():
            future.set_result(None)
        return future

    def _keepalive_ping(self, rnd_id: int) -> None:
        """MTProto pings are not API requests; the sandbox connection never goes stale."""

    def send(self, request, ordered: bool = False):
        if not self.is_connected():
            raise ConnectionError("Cannot send requests while disconnected")
        if isinstance(request, list):
            return [asyncio.ensure_future(self._invoke(item)) for item in request]
        # Awaited at once by whoever sends (Telethon's request loop, the transfers), as MTProtoSender's future
        # is: a coroutine needs no task of its own.
        return self._invoke(request)

    # The wire

    @property
    def key_id(self) -> str:
        return str(self.auth_key.key_id)

    def _link_delay(self, size: int) -> float:
        """Seconds until `size` bytes sent now have passed this connection's link (one at a time), plus half a
        round trip."""
        now = time.monotonic()
        self._link_free_at = max(now, self._link_free_at) + (size / self._rate if self._rate else 0)
        return self._link_free_at - now + self._rtt / 2

    async def _travel(self, size: int) -> None:
        delay = self._link_delay(size)
        if delay > 0:
            await asyncio.sleep(delay)

    def _answer(self, request) -> tuple[bytes, float]:
        """Telegram's side of a request: its answer as the bytes that come back, and how long the account's
        bandwidth holds them. Raises RpcAnswer for Telegram's errors."""
        if self._server is None:
            raise ConnectionError("The connection was closed while the request was in flight")
        result, wait = self._server.answer(
            unwrap(request), key_id=self.key_id, dc_id=self._dc_id, phone=self._phone, connecting=self.connecting
        )
        return serialize(result), wait

    async def _invoke(self, request):
        # What the client does on a real wire is this coroutine's: serializing the request, reading the answer.
        await self._travel(len(bytes(request)))
        try:
            data, wait = self._answer(request)
        except RpcAnswer as answer:
            await self._travel(0)
            raise rpc_message_to_error(types.RpcError(answer.code, answer.message), request) from None
        if wait > 0:
            await asyncio.sleep(wait)
        await self._travel(len(data))
        with BinaryReader(data) as reader:
            result = request.read_result(reader)
        if self._updates_queue is not None:
            MTProtoSender._store_own_updates(self, result)  # as Telethon's sender: the update loop sees the pts
        return result


class SandboxClient(StashcastClient):
    """A real TelegramClient whose network is the sandbox server of the world at `world_path`."""

    def __init__(self, session, api_id, api_hash, *, world_path, phone: str, **options):
        super().__init__(session, api_id, api_hash, **options)
        self._world_path, self._phone = world_path, phone
        updates_queue = None if self._no_updates else self._updates_queue
        self._sender = self._new_sender(self.session.auth_key, updates_queue=updates_queue)

    def _new_sender(self, auth_key: AuthKey | None, updates_queue: asyncio.Queue | None = None) -> SandboxSender:
        return SandboxSender(
            auth_key,
            world_path=self._world_path,
            phone=self._phone,
            auth_key_callback=self._auth_key_callback,
            updates_queue=updates_queue,
        )

    async def connect(self) -> None:
        self._sender.connecting = True
        try:
            await super().connect()
        finally:
            self._sender.connecting = False

    def _part_sender(self, auth_key: AuthKey) -> SandboxSender:
        sender = self._new_sender(auth_key)
        sender.connecting = True  # its initConnection is counted with connecting, as the client's own
        return sender

    async def _open_part_sender(self, dc_id: int, auth_key: AuthKey) -> SandboxSender:
        sender = await super()._open_part_sender(dc_id, auth_key)
        sender.connecting = False
        return sender

    def _exported_sender(self) -> SandboxSender:
        return self._new_sender(None)
