import json
import time

from django.core.management.base import BaseCommand

from telegram.management.world import sandbox_world_open
from telegram.sandbox.bots import callback, person_presses

ANSWER_WAIT_SECONDS = 5  # how long the command waits for the bot's answer to the press, as a phone shows it


class Command(BaseCommand):
    help = "A person presses an inline button of a bot's message: sandbox_press USER_ID @BOTNAME MESSAGE_ID TEXT."

    def add_arguments(self, parser):
        parser.add_argument("user_id", type=int, help="the person (a chat of type 'user')")
        parser.add_argument("bot", help="the bot's @username")
        parser.add_argument("message_id", type=int, help="the bot's message carrying the button")
        parser.add_argument("button", nargs="+", help="the button's text")

    def handle(self, *args, user_id: int, bot: str, message_id: int, button: list[str], **options):
        with sandbox_world_open() as world:
            query_id = person_presses(
                world, user_id=user_id, username=bot, message_id=message_id, button=" ".join(button)
            )
            deadline = time.monotonic() + ANSWER_WAIT_SECONDS
            while not (query := callback(world, query_id))["answered"] and time.monotonic() < deadline:
                time.sleep(0.05)
        self.stdout.write(
            json.dumps({"query_id": query_id, "answered": bool(query["answered"]), "answer": query["answer"]})
        )
