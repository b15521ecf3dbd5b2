"""The bot of the demo world of `make run`: its token on the Bot page, turned on, open to everyone, so Dana (a
person of the demo world) can talk to it with `sandbox_say 7001 @stash_bot /latest`."""

import json

from django.conf import settings
from django.core.management.base import BaseCommand

from packages.bot.services import bot_settings_get, bot_settings_update
from packages.models import BotAudience

DEMO_WORLD = settings.BASE_DIR / "telegram" / "sandbox" / "worlds" / "demo.json"


class Command(BaseCommand):
    help = "Connect the demo world's bot (once): its token on the Bot page, the bot on, open to everyone."

    def handle(self, *args, **options):
        if bot_settings_get().token_sealed:
            return
        bots = json.loads(DEMO_WORLD.read_text()).get("bots") or []
        if not bots:
            return
        bot_settings_update(
            enabled=True, token=bots[0]["token"], audience=BotAudience.EVERYONE, allowed_user_ids=[], sends_per_day=20
        )
        name = bots[0]["username"]
        self.stdout.write(f"The demo bot @{name} is on: try `manage.py sandbox_say 7001 @{name} /latest`.")
