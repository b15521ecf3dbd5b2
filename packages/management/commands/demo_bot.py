"""The bot of the demo world of `make run`: its token on the Bot page, turned on, open to the members of the demo
world's chats that list people (the archive channel, where Dana is and Finn is not), so
`sandbox_say 7001 @stash_bot /search dragon` is answered and `sandbox_say 7002 @stash_bot /start` told why not."""

import json

from django.conf import settings
from django.core.management.base import BaseCommand

from accounts.models import Chat
from packages.bot.services import bot_member_chat_choices, bot_settings_get, bot_settings_update
from packages.models import BotAudience

DEMO_WORLD = settings.BASE_DIR / "telegram" / "sandbox" / "worlds" / "demo.json"


class Command(BaseCommand):
    help = (
        "Connect the demo world's bot (once): its token on the Bot page, the bot on, open to members of the demo "
        "chats that list people (to everyone when those chats are not stored yet: load the world with --authorize)."
    )

    def handle(self, *args, **options):
        if bot_settings_get().token_sealed:
            return
        world = json.loads(DEMO_WORLD.read_text())
        bots = world.get("bots") or []
        if not bots:
            return
        with_people = {chat["id"] for chat in world.get("chats", []) if chat.get("people")}
        chats: list[Chat] = [chat for chat in bot_member_chat_choices() if chat.telegram_id in with_people]
        bot_settings_update(
            enabled=True,
            token=bots[0]["token"],
            audience=BotAudience.MEMBERS if chats else BotAudience.EVERYONE,
            allowed_user_ids=[],
            sends_per_day=20,
            member_chats=chats,
        )
        name = bots[0]["username"]
        if chats:
            titles = ", ".join(chat.title for chat in chats)
            self.stdout.write(
                f"The demo bot @{name} is on for members of {titles}: try `manage.py sandbox_say 7001 @{name} "
                f"/search dragon` (Dana, a member) and `manage.py sandbox_say 7002 @{name} /start` (Finn, not one)."
            )
        else:
            self.stdout.write(
                f"The demo bot @{name} is on for everyone: try `manage.py sandbox_say 7001 @{name} /latest`."
            )
