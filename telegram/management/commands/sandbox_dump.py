import json

from django.core.management.base import BaseCommand

from telegram.management.world import sandbox_world_open
from telegram.sandbox.bots import conversations


class Command(BaseCommand):
    help = "Everything in a sandbox chat, including what the project uploaded or sent."

    def add_arguments(self, parser):
        parser.add_argument("chat_id", type=int)
        parser.add_argument("--json", action="store_true", dest="as_json", help="print the dump as JSON")

    def handle(self, *args, chat_id: int, as_json: bool, **options):
        with sandbox_world_open() as world:
            dump = world.chat_dump(chat_id)
            if dump["chat"]["type"] == "user":  # a person: their private chats with the bots too
                dump["bots"] = conversations(world, chat_id)
        if as_json:
            self.stdout.write(json.dumps(dump, indent=2))
            return
        chat = dump["chat"]
        self.stdout.write(f"{chat['title']} ({chat['type']}{', forum' if chat['forum'] else ''}), id {chat['id']}")
        for message in dump["messages"]:
            media = message["document"] or message["photo"]
            line = f"  #{message['id']} {message['date']} {message['sender'] or '-'}"
            if message["topic"] is not None:
                line += f" [topic {message['topic']}]"
            if media:
                line += f" {media['name']} ({media['size']} bytes)"
            if message["text"]:
                line += f" {message['text']!r}"
            self.stdout.write(line)
        for chat in dump.get("bots", []):
            self.stdout.write(f"with {chat['bot']}:")
            for message in chat["messages"]:
                buttons = " | ".join(" ".join(f"[{text}]" for text in row) for row in message["buttons"])
                document = f" {message['document']}" if message["document"] else ""
                self.stdout.write(f"  #{message['id']} {message['from']}{document} {message['text']!r} {buttons}")
