from django.core.management.base import BaseCommand

from telegram.management.world import sandbox_world_open


class Command(BaseCommand):
    help = "Delete a message of a sandbox chat as if a person (its author or an admin) had deleted it."

    def add_arguments(self, parser):
        parser.add_argument("chat_id", type=int)
        parser.add_argument("message_id", type=int)

    def handle(self, *args, chat_id: int, message_id: int, **options):
        with sandbox_world_open() as world:
            world.message_delete(chat_id, message_id)
        self.stdout.write(f"Deleted message {message_id} of chat {chat_id}.")
