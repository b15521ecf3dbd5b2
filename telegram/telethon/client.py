"""The TelegramClient every gateway uses, real or sandboxed."""

import asyncio
import contextlib

from telethon import TelegramClient, errors, functions
from telethon.crypto import AuthKey
from telethon.network import MTProtoSender
from telethon.tl.alltlobjects import LAYER

# Telegram's internal errors, which Telethon's request loop tries again in place after a pause.
INTERNAL_ERROR_PAUSE_SECONDS = 2
INTERNAL_ERRORS = (
    errors.ServerError,
    errors.RpcCallFailError,
    errors.RpcMcgetFailError,
    errors.InterdcCallErrorError,
    errors.InterdcCallRichErrorError,
    errors.TimedOutError,
)


@contextlib.asynccontextmanager
async def closed_unless_started(sender):
    """A connection whose start is cancelled or fails half-way is closed, never left open: a connection nobody
    holds keeps the account's key in use after its session lease is given up, beside the next holder's."""
    try:
        yield
    except BaseException:
        await sender.disconnect()
        raise


class StashcastClient(TelegramClient):
    # Requests sent through this client (downloads and uploads count one per part): what a scan "spent".
    requests_sent = 0

    async def _call(self, sender, request, ordered=False, flood_sleep_threshold=None):
        self.requests_sent += len(request) if isinstance(request, list) else 1
        return await super()._call(sender, request, ordered=ordered, flood_sleep_threshold=flood_sleep_threshold)

    async def call_file_part(self, sender, request):
        """A file part's request (upload.getFile, upload.save*FilePart) straight to its connection. Telegram
        never subscribes a connection to updates for file queries, so Telethon's invokeWithoutUpdates wrapper
        is left off: it serializes each 512 KiB part once more. Internal errors are tried again as Telethon
        does; a FloodWait is the caller's."""
        for attempt in range(1, self._request_retries + 1):
            self.requests_sent += 1
            try:
                return await sender.send(request)
            except INTERNAL_ERRORS:
                if attempt == self._request_retries:
                    raise
                await asyncio.sleep(INTERNAL_ERROR_PAUSE_SECONDS)

    async def _on_login(self, user):
        if not self._no_updates:  # a client that reads updates (the bot) starts from Telegram's update state
            return await super()._on_login(user)
        # Telethon would also fetch the update state (GetState + GetDifference) on every connect; these
        # clients are made with receive_updates=False and never read updates, so that is two wasted requests.
        self._mb_entity_cache.set_self_user(user.id, user.bot, user.access_hash)
        self._authorized = True
        return user

    def _part_sender(self, auth_key: AuthKey | None):
        return MTProtoSender(auth_key, loggers=self._log)

    def _dc_connection(self, dc):
        return self._connection(
            dc.ip_address, dc.port, dc.id, loggers=self._log, proxy=self._proxy, local_addr=self._local_addr
        )

    async def _open_part_sender(self, dc_id: int, auth_key: AuthKey):
        """One more connection to `dc_id`: a new MTProto session of a key already logged in there (file
        transfers spread their parts over several), started with initConnection as Telethon starts its own."""
        sender = self._part_sender(auth_key)
        dc = await self._get_dc(dc_id)
        async with closed_unless_started(sender):
            await sender.connect(self._dc_connection(dc))
            self._init_request.query = functions.help.GetConfigRequest()
            # A connection for file parts never subscribes to updates: it has no queue to put them in.
            request = functions.InvokeWithoutUpdatesRequest(self._init_request)
            await sender.send(functions.InvokeWithLayerRequest(LAYER, request))
        return sender

    async def _create_exported_sender(self, dc_id: int):
        """A connection to another data centre, logged in there by an exported authorization: Telethon's own
        steps, but closed when they do not finish."""
        dc = await self._get_dc(dc_id)
        sender = self._exported_sender()
        async with closed_unless_started(sender):
            await sender.connect(self._dc_connection(dc))
            auth = await self(functions.auth.ExportAuthorizationRequest(dc_id))
            self._init_request.query = functions.auth.ImportAuthorizationRequest(id=auth.id, bytes=auth.bytes)
            await sender.send(functions.InvokeWithLayerRequest(LAYER, self._init_request))
        return sender

    def _exported_sender(self):
        return MTProtoSender(None, loggers=self._log)
