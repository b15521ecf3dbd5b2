import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from telegram.sandbox.bots import person_says
from telegram.sandbox.world import World, WorldError


class Command(BaseCommand):
    help = "A person of the sandbox world writes to a bot: sandbox_say USER_ID @BOTNAME TEXT."

    def add_arguments(self, parser):
        parser.add_argument("user_id", type=int, help="the person (a chat of type 'user')")
        parser.add_argument("bot", help="the bot's @username")
        parser.add_argument("text", nargs="+")

    def handle(self, *args, user_id: int, bot: str, text: list[str], **options):
        try:
            world = World(settings.SANDBOX_PATH)
            try:
                message_id = person_says(world, user_id=user_id, username=bot, text=" ".join(text))
            finally:
                world.close()
        except WorldError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(json.dumps({"message_id": message_id}))
