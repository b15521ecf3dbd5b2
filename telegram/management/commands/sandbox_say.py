import json

from django.core.management.base import BaseCommand

from telegram.management.world import sandbox_world_open
from telegram.sandbox.bots import person_says


class Command(BaseCommand):
    help = "A person of the sandbox world writes to a bot: sandbox_say USER_ID @BOTNAME TEXT."

    def add_arguments(self, parser):
        parser.add_argument("user_id", type=int, help="the person (a chat of type 'user')")
        parser.add_argument("bot", help="the bot's @username")
        parser.add_argument("text", nargs="+")

    def handle(self, *args, user_id: int, bot: str, text: list[str], **options):
        with sandbox_world_open() as world:
            message_id = person_says(world, user_id=user_id, username=bot, text=" ".join(text))
        self.stdout.write(json.dumps({"message_id": message_id}))
