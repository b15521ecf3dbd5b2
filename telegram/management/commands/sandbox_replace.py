import json

from django.core.management.base import BaseCommand, CommandError

from telegram.management.world import sandbox_world_open


class Command(BaseCommand):
    help = "Replace the file of a sandbox message as if its author had edited the post; prints the new file's id."

    def add_arguments(self, parser):
        parser.add_argument("chat_id", type=int)
        parser.add_argument("message_id", type=int)
        parser.add_argument(
            "--document-json",
            metavar="JSON",
            help='the new file as a world-file document, e.g. \'{"name": "a.stl", "size": 100, "seed": 2}\' '
            "(default: the same name and size, other bytes)",
        )

    def handle(self, *args, chat_id: int, message_id: int, document_json: str | None, **options):
        try:
            document = None if document_json is None else json.loads(document_json)
        except json.JSONDecodeError as exc:
            raise CommandError(f"--document-json is not JSON: {exc}") from None
        with sandbox_world_open() as world:
            document_id = world.message_replace(chat_id, message_id, document)
        self.stdout.write(f"Message {message_id} of chat {chat_id} now holds file {document_id}.")
