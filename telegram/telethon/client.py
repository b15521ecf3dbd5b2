"""The TelegramClient every gateway uses, real or sandboxed."""

from telethon import TelegramClient


class StashcastClient(TelegramClient):
    # Requests sent through this client (downloads and uploads count one per part): what a scan "spent".
    requests_sent = 0

    async def _call(self, sender, request, ordered=False, flood_sleep_threshold=None):
        self.requests_sent += len(request) if isinstance(request, list) else 1
        return await super()._call(sender, request, ordered=ordered, flood_sleep_threshold=flood_sleep_threshold)

    async def _on_login(self, user):
        # Telethon would also fetch the update state (GetState + GetDifference) on every connect; these
        # clients are made with receive_updates=False and never read updates, so that is two wasted requests.
        self._mb_entity_cache.set_self_user(user.id, user.bot, user.access_hash)
        self._authorized = True
        return user
