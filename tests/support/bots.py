"""The members' bot in tests: run the bot process's loop beside a person's part, and wait for its answers."""

import asyncio

from packages.bot.runner import bot_run
from telegram.sandbox import bots


def bot_messages(world, user_id: int) -> list[dict]:
    """What the bot said to a person, oldest first."""
    found = bots.conversations(world, user_id)
    return [m for m in (found[0]["messages"] if found else []) if m["from"] == "bot"]


async def until(read, *, seconds: float = 15):
    for _ in range(int(seconds / 0.05)):
        found = read()
        if found:
            return found
        await asyncio.sleep(0.05)
    raise AssertionError("the bot did not answer in time")


def with_bot(scenario, token: str):
    """Run the bot process's loop while `scenario()` plays a person's part; stop it after."""

    async def main():
        stop, started = asyncio.Event(), asyncio.Event()
        running = asyncio.create_task(bot_run(token=token, stop=stop, started=started))
        await asyncio.wait([running, asyncio.create_task(started.wait())], return_when=asyncio.FIRST_COMPLETED)
        if running.done():
            running.result()
        try:
            return await scenario()
        finally:
            stop.set()
            await running

    return asyncio.run(main())
