from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from telegram.sandbox.world import World, WorldError


class Command(BaseCommand):
    help = "Delete a message of a sandbox chat as if a person (its author or an admin) had deleted it."

    def add_arguments(self, parser):
        parser.add_argument("chat_id", type=int)
        parser.add_argument("message_id", type=int)

    def handle(self, *args, chat_id: int, message_id: int, **options):
        try:
            world = World(settings.SANDBOX_PATH)
            try:
                world.message_delete(chat_id, message_id)
            finally:
                world.close()
        except WorldError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Deleted message {message_id} of chat {chat_id}.")
