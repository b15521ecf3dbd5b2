"""Scans against Telegram's search quirks: every archive is found, over many randomised worlds.

Each seeded world has one channel with documents and other messages scattered over its history, a
watermark somewhere in it, and the sandbox server answering search as Telegram may: short pages
mid-history and min_id/max_id ignored near the top. The ingestion scan's own paging
(`ingestion.fetching.documents_above`, through the real Telethon adapter) must find exactly the documents
above the watermark. Beside it, on the same worlds, the paging the scan used before: `min_id` sent
to Telegram and a short page taken as the end. Prints worlds tried, documents expected, missed,
extra, and search requests for both.

    .venv/bin/python -m bench.scan_quirks [--worlds 1000] [--seed 1]
"""

import argparse
import asyncio
import random
import shutil
import tempfile

from bench.harness import bench_django

PHONE = "+15550000001"
CHAT = 1001


def random_world(rng: random.Random) -> tuple[dict, int, set[int]]:
    """(world, watermark, ids of the documents above it)."""
    last_id = rng.randint(1, 600)
    share = rng.choice((0.05, 0.3, 0.9))
    messages = []
    for message_id in range(1, last_id + 1):
        if rng.random() < share:
            messages.append({"id": message_id, "document": {"name": f"m{message_id}.bin", "size": 1, "seed": 1}})
        elif rng.random() < 0.5:
            messages.append({"id": message_id, "text": "chatter"})
    watermark = rng.choice((0, rng.randint(0, last_id), max(0, last_id - rng.randint(0, 120))))
    expected = {message["id"] for message in messages if "document" in message and message["id"] > watermark}
    world = {
        "accounts": [{"phone": PHONE}],
        "quirks": {"short_search_pages": True, "search_min_id_near_top": True},
        "chats": [{"id": CHAT, "title": "Quirky", "type": "channel", "members": [PHONE], "messages": messages}],
    }
    return world, watermark, expected


async def naive_scan(gateway, ref, *, min_id: int) -> set[int]:
    """min_id/max_id sent as they are, and a page under 100 messages taken as the last one."""
    from telethon.tl import functions, types

    found, max_id = set(), 0
    while True:
        result = await gateway._client(
            functions.messages.SearchRequest(
                peer=types.InputPeerChannel(ref.id, ref.access_hash),
                q="",
                filter=types.InputMessagesFilterDocument(),
                min_date=None,
                max_date=None,
                offset_id=0,
                add_offset=0,
                limit=100,
                max_id=max_id,
                min_id=min_id,
                hash=0,
            )
        )
        found |= {message.id for message in result.messages}
        if len(result.messages) < 100:
            return found
        max_id = min(message.id for message in result.messages)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worlds", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    bench_django("scan_quirks")
    from django.conf import settings

    from ingestion.fetching import documents_above
    from telegram.gateway import open_gateway
    from telegram.records import ChatRef
    from telegram.sandbox import tl
    from telegram.sandbox.world import World, world_load

    rng = random.Random(args.seed)
    expected_total = missed = extra = searches = naive_missed = naive_searches = 0
    root = tempfile.mkdtemp(prefix="scan-quirks-")
    settings.SANDBOX_PATH = root
    try:
        for _ in range(args.worlds):
            data, watermark, expected = random_world(rng)
            world_load(root, data)
            world = World(root)
            ref = ChatRef(id=CHAT, access_hash=tl.access_hash("chat", PHONE, CHAT))

            async def scan(world=world, watermark=watermark, ref=ref):
                async with open_gateway(phone=PHONE, session=world.session_issue(PHONE)) as gateway:
                    ours = await documents_above(gateway, ref, min_id=watermark)
                    searched = world.stats()["calls"][PHONE].get("messages.search", 0)
                    return {message.id for message in ours}, searched, await naive_scan(gateway, ref, min_id=watermark)

            found, searched, naive = asyncio.run(scan())
            expected_total += len(expected)
            missed += len(expected - found)
            extra += len(found - expected)
            searches += searched
            naive_missed += len(expected - naive)
            naive_searches += world.stats()["calls"][PHONE].get("messages.search", 0) - searched
            world.close()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"worlds {args.worlds} (seed {args.seed}), short pages and top-of-history min_id on")
    print(f"documents above the watermark: {expected_total}")
    print(f"Stashcast: missed {missed}, extra {extra} (goal 0 and 0); {searches} search requests")
    print(f"min_id paging, short page = end: missed {naive_missed}; {naive_searches} search requests")


if __name__ == "__main__":
    main()
