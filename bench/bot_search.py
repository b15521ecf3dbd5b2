"""The members' bot at scale: `/search` answered from a person's message to the bot's answer (both as the sandbox
dates them), over 100,000 packages and 1,000,000 listed files in the archive channel, by the real bot loop (the
Telethon client logged in with the bot's token) on the sandbox server. Then 200 people write at once: every one
must be answered, and no second may hold more of the bot's messages than the Bot API allows (the pacer's figures,
BOT_SENDS_PER_SECOND overall and one per BOT_PERSON_SECONDS_BETWEEN_SENDS to a person).

    .venv/bin/python -m bench.bot_search [--packages 100000] [--files-per-package 10] [--people 200] [--rounds 5]
                                         [--reuse]
"""

import argparse
import asyncio
import statistics
import time

from bench.harness import bench_django, catalog_seed

TOKEN = "7000001:BENCH"
BOT = "@stash_bot"
ARCHIVE = 3001
PERSON_BASE = 8_000_000
QUERIES = [
    ("a word in every package", "dragon"),
    ("two word prefixes", "gob part_7"),
    ("a rare path", "sword-4242"),
    ("a substring in every package", "agon"),
    ("a rare substring", "ord-4242"),
    ("a name", "model 4242"),
    ("nothing", "unicorn"),
]


def seed(*, packages: int, files_per_package: int) -> None:
    from django.db import connection
    from django.utils import timezone

    from accounts.models import Chat
    from packages.models import BotSettings

    archive = Chat.objects.create(telegram_id=ARCHIVE, title="Archive", type="channel")
    catalog_seed(
        packages=packages, files_per_package=files_per_package, chats=[archive], now=timezone.now(), destination=archive
    )
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # what autovacuum does on a live database soon after such inserts
    BotSettings.objects.create(pk=1, enabled=True, audience="everyone", sends_per_day=1000)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def answers(world, asked: dict[int, int]) -> dict[int, tuple[float, float, str]]:
    """For each person who asked (user id → their message id): (asked at, answered at, the answer's first words),
    when the bot has answered."""
    found = {}
    for user_id, message_id in asked.items():
        rows = world.conn.execute(
            "SELECT q.date, a.date, a.text FROM bot_messages q JOIN bot_messages a ON a.bot_id = q.bot_id"
            " AND a.user_id = q.user_id AND a.from_bot AND a.id > q.id WHERE q.bot_id = ? AND q.id = ?"
            " ORDER BY a.id LIMIT 1",
            (int(TOKEN.split(":")[0]), message_id),
        ).fetchall()
        if rows:
            found[user_id] = (rows[0][0], rows[0][1], rows[0][2][:60])
    return found


async def ask_all(world, people: list[int], text: str, *, seconds: float) -> dict[int, tuple[float, float, str]]:
    from telegram.sandbox import bots

    asked = {user_id: bots.person_says(world, user_id=user_id, username=BOT, text=text) for user_id in people}
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = answers(world, asked)
        if len(found) == len(asked):
            return found
        await asyncio.sleep(0.01)
    return answers(world, asked)


def busiest_second(dates: list[float]) -> int:
    dates = sorted(dates)
    most, start = 0, 0
    for end, date in enumerate(dates):
        while date - dates[start] >= 1:
            start += 1
        most = max(most, end - start + 1)
    return most


async def measure(args, world) -> None:
    from django.conf import settings

    from packages.bot.runner import bot_run

    people = [PERSON_BASE + n for n in range(args.people)]
    stop, started = asyncio.Event(), asyncio.Event()
    running = asyncio.create_task(bot_run(token=TOKEN, stop=stop, started=started))
    await asyncio.wait([running, asyncio.create_task(started.wait())], return_when=asyncio.FIRST_COMPLETED)
    if running.done():
        running.result()  # the bot could not start: say why
    try:
        # One person at a time (each a different person: the pacer spaces one person's messages a second apart).
        print(f"{'/search, one person at a time':<40} {'p50 ms':>8} {'p95 ms':>8} {'matches':>9}")
        every = []
        turn = iter(range(PERSON_BASE, PERSON_BASE + len(QUERIES) * args.rounds))
        for label, words in QUERIES:
            timings, said = [], ""
            for _ in range(args.rounds):
                (asked_at, answered_at, said), *_ = (
                    await ask_all(world, [next(turn)], f"/search {words}", seconds=30)
                ).values()
                timings.append((answered_at - asked_at) * 1000)
            every += timings
            matches = said.split(" ", 1)[0] if said[:1].isdigit() else ("1000+" if said.startswith("More") else "0")
            p50, p95 = statistics.median(timings), percentile(timings, 0.95)
            print(f"{label + f' ({words})':<40} {p50:>8.1f} {p95:>8.1f} {matches:>9}")
        print(f"{'all of them':<40} {statistics.median(every):>8.1f} {percentile(every, 0.95):>8.1f} (goal p95 ≤ 300)")

        # Everyone at once.
        await asyncio.sleep(settings.BOT_PERSON_SECONDS_BETWEEN_SENDS)  # the people above may write again
        sent_before = world.conn.execute("SELECT coalesce(max(date), 0) FROM bot_messages WHERE from_bot").fetchone()[0]
        began = time.monotonic()
        found = await ask_all(world, people, "/search dragon", seconds=60 + 2 * len(people))
        took = time.monotonic() - began
        waits = [(answered - asked) * 1000 for asked, answered, _ in found.values()]
        sends = world.conn.execute(
            "SELECT user_id, date FROM bot_messages WHERE from_bot AND date > ? ORDER BY date", (sent_before,)
        ).fetchall()
        by_person: dict[int, list[float]] = {}
        for user_id, date in sends:
            by_person.setdefault(user_id, []).append(date)
        closest = min(
            (b - a for dates in by_person.values() for a, b in zip(dates, dates[1:], strict=False)), default=None
        )
        print(
            f"{len(people)} people at once: {len(found)} answered in {took:.1f} s; wait p50 "
            f"{statistics.median(waits):.0f} ms, p95 {percentile(waits, 0.95):.0f} ms, max {max(waits):.0f} ms"
        )
        print(
            f"busiest second: {busiest_second([date for _, date in sends])} messages "
            f"(pacer {settings.BOT_SENDS_PER_SECOND}/s, Bot API about 30/s); most to one person: "
            f"{max(len(d) for d in by_person.values())} message(s)"
            + (f", closest two {closest:.2f} s apart" if closest is not None else "")
        )
    finally:
        stop.set()
        await running


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--packages", type=int, default=100_000)
    parser.add_argument("--files-per-package", type=int, default=10)
    parser.add_argument("--people", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5, help="Searches of each kind, one person at a time.")
    parser.add_argument("--reuse", action="store_true", help="Search the catalog a previous run left (no seeding).")
    args = parser.parse_args()
    bench_django("bot_search", keep=args.reuse)
    from django.conf import settings

    from packages.models import BotPerson, BotSettings, Package, PackageFile
    from telegram.sandbox.loader import world_load
    from telegram.sandbox.world import World

    if args.reuse:  # a new sandbox world: the people and the bot's session of the last run are not in it
        BotPerson.objects.all().delete()
        BotSettings.objects.update(session_sealed="", session_bot_id=None, update_state={})
        print(f"{Package.objects.count()} packages, {PackageFile.objects.count()} files (reused)")
    else:
        began = time.monotonic()
        seed(packages=args.packages, files_per_package=args.files_per_package)
        print(
            f"{args.packages} packages, {args.packages * args.files_per_package} files seeded in "
            f"{time.monotonic() - began:.0f} s"
        )
    world_load(
        settings.SANDBOX_PATH,
        {
            "accounts": [{"phone": "+15550000001"}],
            "bots": [{"id": 7000001, "username": "stash_bot", "token": TOKEN, "admin_of": [ARCHIVE]}],
            "chats": [
                {"id": ARCHIVE, "title": "Archive", "type": "channel", "admins": ["+15550000001"]},
                *(
                    {"id": PERSON_BASE + n, "title": f"Person {n}", "type": "user"}
                    for n in range(max(args.people, len(QUERIES) * args.rounds))
                ),
            ],
        },
    )
    world = World(settings.SANDBOX_PATH)
    asyncio.run(measure(args, world))


if __name__ == "__main__":
    main()
