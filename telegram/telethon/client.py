"""The TelegramClient every gateway uses, real or sandboxed."""

from telethon import TelegramClient


class StashcastClient(TelegramClient):
    async def _on_login(self, user):
        # Telethon would also fetch the update state (GetState + GetDifference) on every connect; these
        # clients are made with receive_updates=False and never read updates, so that is two wasted requests.
        self._mb_entity_cache.set_self_user(user.id, user.bot, user.access_hash)
        self._authorized = True
        return user
