"""What every call of the Telethon gateway stands on: the account's session lease, its client and connection,
and the connections its file parts go over (transfers.SenderPool); handed over to another process that waits."""

import struct
from typing import Self

from telethon import utils
from telethon.sessions import StringSession

from core.leases import SessionBusy
from telegram.errors import AuthRequired, SessionInUse
from telegram.records import AccountInfo, TopicInfo
from telegram.telethon import transfers
from telegram.telethon.client import StashcastClient
from telegram.telethon.errors import mapped_errors


class GatewayConnection:
    """The state the gateway's calls share: the client (`_client`), its file connections (`_senders`), the account
    once known (`_me`, set at login) and the forum topics read so far (`_topics`)."""

    def __init__(
        self,
        phone: str,
        session: str,
        api_id: int | str,
        api_hash: str,
        *,
        client_factory=None,
        lease=None,
        wait_seconds: float = 0,
        parts_in_flight: int = 1,
        connections: int = 1,
        account_parts_in_flight: int | None = None,
        transfer_budget=None,
    ):
        self.phone = phone
        # Every auth request carries the number as official clients send it, digits only: Telegram answers
        # PHONE_CODE_EXPIRED to a signIn whose number is spelled otherwise than its sendCode's.
        self._login_phone = utils.parse_phone(phone) or phone
        self._lease_factory = lease  # session_lease(wait_seconds=...) of this account, or None (tools, tests)
        self._wait_seconds = wait_seconds
        self._lease_block = None
        self._lease = None
        self._session = session
        self._api_id = int(api_id)
        self._api_hash = api_hash
        self._client_factory = client_factory or StashcastClient
        self._client = None
        self._parts_in_flight = parts_in_flight
        self._connections = connections
        self._account_parts_in_flight = account_parts_in_flight or parts_in_flight
        self._senders: transfers.SenderPool | None = None
        self._transfer_budget = transfer_budget  # awaited with each file part's bytes (transfers.SenderPool)
        self._me: AccountInfo | None = None
        self._topics: dict[int, list[TopicInfo]] = {}

    async def __aenter__(self) -> Self:
        try:
            session = StringSession(self._session)
        except (ValueError, struct.error) as exc:
            raise AuthRequired("The stored Telegram session cannot be read; log in again.") from exc
        await self._take_lease(self._wait_seconds)
        self._client = self._client_factory(
            session,
            self._api_id,
            self._api_hash,
            # Callers own pacing: every FloodWait reaches them instead of being slept through here.
            flood_sleep_threshold=0,
            # One in-place retry (also the second attempt a DC migration needs at login); callers back off
            # beyond that. Without raise_last_call_error Telethon would hide the real error in a ValueError.
            request_retries=2,
            raise_last_call_error=True,
            # A worker task only makes requests: no update stream to keep up with.
            receive_updates=False,
        )
        await self._connect()
        return self

    async def _connect(self) -> None:
        try:
            with mapped_errors():
                await self._client.connect()
            self._senders = transfers.SenderPool(
                self._client,
                connections=self._connections,
                account_parts_in_flight=self._account_parts_in_flight,
                budget=self._transfer_budget,
            )
        except BaseException:
            # A connect refused half-way (FLOOD_WAIT, AUTH_KEY_DUPLICATED) must not leave the socket open.
            await self._client.disconnect()
            await self._release_lease()
            raise

    async def __aexit__(self, *exc_info) -> None:
        # The client object stays, disconnected, so export_session() still works after the block.
        try:
            try:
                await self._close_part_senders()
            finally:
                await self._client.disconnect()
        finally:
            await self._release_lease()

    async def _close_part_senders(self) -> None:
        senders, self._senders = self._senders, None
        if senders is not None:
            await senders.close()

    async def _take_lease(self, wait_seconds: float) -> None:
        if self._lease_factory is None:
            return
        block = self._lease_factory(wait_seconds=wait_seconds)
        try:
            self._lease = await block.__aenter__()
        except SessionBusy as exc:
            raise SessionInUse(f"{exc} It is tried again later.", rpc="SESSION_IN_USE") from None
        self._lease_block = block

    async def _release_lease(self) -> None:
        block, self._lease_block, self._lease = self._lease_block, None, None
        if block is not None:
            await block.__aexit__(None, None, None)

    async def wanted_elsewhere(self) -> bool:
        return self._lease is not None and await self._lease.wanted()

    async def hand_over_if_wanted(self, *, wait_seconds: float) -> bool:
        if not await self.wanted_elsewhere():
            return False
        await self._close_part_senders()
        await self._client.disconnect()
        await self._release_lease()
        await self._take_lease(wait_seconds)
        await self._connect()
        return True

    @property
    def requests_sent(self) -> int:
        return getattr(self._client, "requests_sent", 0)

    def export_session(self) -> str:
        if self._client is None:
            return self._session
        return self._client.session.save()
