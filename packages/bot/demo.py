"""The demo world's bot (`make run` on the sandbox): whether the console's bot is it, and the commands that talk
to it as its people, exactly as they run from a fresh clone (`make manage ARGS='…'`). The demo_bot command prints
them and the Bot page shows them, from this one place."""

import json
from dataclasses import dataclass
from functools import cache

from django.conf import settings

DEMO_WORLD = settings.BASE_DIR / "telegram" / "sandbox" / "worlds" / "demo.json"


@dataclass(frozen=True)
class DemoCommand:
    command: str
    what: str


@cache
def demo_world() -> dict:
    return json.loads(DEMO_WORLD.read_text())


def demo_bot_spec() -> dict | None:
    """The demo world's bot ({"id", "username", "token", …}), None when it has none."""
    return next(iter(demo_world().get("bots") or []), None)


def demo_bot_is_ours(*, token: str) -> bool:
    """Whether the console's bot is the demo world's, talked to in the sandbox."""
    spec = demo_bot_spec()
    return settings.TELEGRAM_BACKEND == "sandbox" and spec is not None and token == spec["token"]


def _manage(args: str) -> str:
    return f"make manage ARGS='{args}'"


def demo_try_commands(*, members_only: bool) -> list[DemoCommand]:
    """What to type to try the demo bot as its people: a member searches, reads the answer, presses a button; one
    in none of the chosen chats is told why not (when the bot is for members of chats)."""
    world, spec = demo_world(), demo_bot_spec()
    if spec is None:
        return []
    bot = f"@{spec['username']}"
    listed = {chat["id"]: chat["title"] for chat in world["chats"] if chat.get("type") == "user"}
    members = {person for chat in world["chats"] for person in chat.get("people") or []}
    member = next(p for p in listed if p in members)
    stranger = next((p for p in listed if p not in members), None)
    name = listed[member]
    found = [
        DemoCommand(_manage(f'sandbox_say {member} {bot} "/search dragon"'), f"{name} asks the bot for dragons."),
        DemoCommand(
            _manage(f"sandbox_dump {member}"), f"{name}'s chat with the bot: each message's number and buttons."
        ),
        DemoCommand(
            _manage(f'sandbox_press {member} {bot} MESSAGE_ID "BUTTON"'),
            f"{name} presses a button (its text, as the dump shows it) of message MESSAGE_ID: a package, then "
            "“Send me”; the dump shows the file and its caption.",
        ),
    ]
    if members_only and stranger is not None:
        found.append(
            DemoCommand(
                _manage(f"sandbox_say {stranger} {bot} /start"),
                f"{listed[stranger]}, in none of the chosen chats, is told why not (dump {stranger} to read it).",
            )
        )
    return found
