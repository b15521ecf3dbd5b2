"""The bot of the demo world of `make run`: its token on the Bot page, turned on, open to the members of the demo
world's chats that list people (the archive channel, where Dana is and Finn is not), so Dana searching is answered
and Finn told why not; it prints the commands that try it (packages.bot.demo, as the Bot page shows them)."""

from django.core.management.base import BaseCommand

from accounts.models import Chat
from packages.bot.demo import demo_bot_spec, demo_try_commands, demo_world
from packages.bot.services import bot_member_chat_choices, bot_settings_get, bot_settings_update
from packages.models import BotAudience


class Command(BaseCommand):
    help = (
        "Connect the demo world's bot (once): its token on the Bot page, the bot on, open to members of the demo "
        "chats that list people (to everyone when those chats are not stored yet: load the world with --authorize)."
    )

    def handle(self, *args, **options):
        if bot_settings_get().token_sealed:
            return
        spec = demo_bot_spec()
        if spec is None:
            return
        world = demo_world()
        with_people = {chat["id"] for chat in world.get("chats", []) if chat.get("people")}
        chats: list[Chat] = [chat for chat in bot_member_chat_choices() if chat.telegram_id in with_people]
        bot_settings_update(
            enabled=True,
            token=spec["token"],
            audience=BotAudience.MEMBERS if chats else BotAudience.EVERYONE,
            allowed_user_ids=[],
            sends_per_day=20,
            member_chats=chats,
        )
        audience = f"for members of {', '.join(chat.title for chat in chats)}" if chats else "for everyone"
        self.stdout.write(f"The demo bot @{spec['username']} is on {audience}. Try it from another terminal:")
        for step in demo_try_commands(members_only=bool(chats)):
            self.stdout.write(f"  {step.command}\n      {step.what}")
