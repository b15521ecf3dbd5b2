"""Telegram requests per ingestion cycle: one forum with 1,086 topics and 20 plain channels.

Cycles: 1 full, 2 idle, 3 after one new archive in one topic, 4 after a restart
(a fresh process). Printed by Telegram method from the sandbox server's request
counts, with the requests made while connecting counted apart, next to a
per-topic, per-channel strategy (one history request each) run in the same
harness on the same world as the baseline. Goals: idle ≤ 1 request besides
connecting; one new archive ≤ 3 besides connecting and the transfer, plus 1 for
its preview (the chat's photos, read once a cycle); connecting ≤ 3 requests per
account per cycle.

    .venv/bin/python -m bench.scan_calls
"""

import os
import subprocess
import sys

from bench.harness import bench_django

READER = "+15550000001"
BASELINE = "+15550000002"  # a second member, so its requests are counted apart
WRITER = "+15550000009"
FORUM = 2000
TOPICS = 1086
PLAIN = 20
TRANSFER = {"upload.getFile", "upload.saveFilePart", "upload.saveBigFilePart", "messages.sendMedia"}


def build_world() -> dict:
    topics = [{"id": 1, "title": "General"}] + [{"id": 100 + n, "title": f"Topic {n}"} for n in range(TOPICS - 1)]
    forum_messages = []
    for n in range(0, TOPICS - 1, 4):  # an archive in every fourth topic
        entry = [{"path": f"t{n}/model.stl", "size": 64 + n}]
        forum_messages.append({"id": 10 + n, "topic": 100 + n, "document": {"name": f"t{n}.zip", "archive": entry}})
    chats = [
        {
            "id": FORUM,
            "title": "Big forum",
            "type": "supergroup",
            "forum": True,
            "role": "source",
            "members": [READER, BASELINE],
            "topics": topics,
            "messages": forum_messages,
        }
    ]
    for c in range(PLAIN):
        messages = [
            {"id": 5 + m, "document": {"name": f"c{c}-{m}.zip", "archive": [{"path": f"c{c}/{m}.stl", "size": 32 + m}]}}
            for m in range(3)
        ]
        chats.append(
            {
                "id": 3000 + c,
                "title": f"Plain {c}",
                "type": "channel",
                "role": "source",
                "members": [READER, BASELINE],
                "messages": messages,
            }
        )
    chats.append(
        {
            "id": 9000,
            "title": "Archive",
            "type": "channel",
            "role": "destination",
            "members": [WRITER],
            "admins": [WRITER],
        }
    )
    accounts = [{"phone": phone, "first_name": phone[-2:], "code": "12345"} for phone in (READER, BASELINE, WRITER)]
    return {"accounts": accounts, "chats": chats}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--cycle":
        return one_cycle_in_this_process()
    # Scheduled cycles are INGEST_INTERVAL_MINUTES apart, beyond the recent-scan window.
    os.environ["INGEST_SKIP_RECENT_SCAN_WINDOW_SECONDS"] = "0"
    bench_django("scan")
    from django.conf import settings

    from accounts.models import TelegramAccount
    from ingestion.models import AccountChannelMap
    from operations.sandbox import sandbox_authorize
    from telegram.sandbox.loader import world_load
    from telegram.sandbox.world import World

    world_load(settings.SANDBOX_PATH, build_world())
    sandbox_authorize()
    # The baseline account is a member only to be counted; it does not ingest.
    AccountChannelMap.objects.filter(account__phone=BASELINE).delete()
    TelegramAccount.objects.filter(phone=BASELINE).update(is_active=False)
    world = World(settings.SANDBOX_PATH)

    rows = []
    baseline = Baseline(world)
    for label, prepare in (
        ("1 full", None),
        ("2 idle", None),
        ("3 one new archive", lambda: world.message_post(FORUM, topic=100 + 40, document=_new_archive())),
        ("4 after a restart", None),
    ):
        if prepare:
            prepare()
        world.stats_reset()
        if label.startswith("4"):
            subprocess.run([sys.executable, "-m", "bench.scan_calls", "--cycle"], check=True, env=os.environ.copy())
        else:
            one_cycle()
        ours, connecting = besides_connecting(world.stats(), READER)
        world.stats_reset()
        baseline.cycle()
        theirs, _ = besides_connecting(world.stats(), BASELINE)
        rows.append((label, ours, connecting, theirs))

    print(f"{'cycle':<20} {'Stashcast requests (besides connecting and the transfer)':<62} {'total':>6}", end="")
    print(f" {'connecting':>11} {'baseline':>9}")
    for label, ours, connecting, theirs in rows:
        reading = {method: count for method, count in ours.items() if method not in TRANSFER}
        transfer = {method: count for method, count in ours.items() if method in TRANSFER}
        shown = ", ".join(f"{method} {count}" for method, count in sorted(reading.items())) or "none"
        print(f"{label:<20} {shown:<62} {sum(reading.values()):>6} {connecting:>11} {sum(theirs.values()):>9}")
        if transfer:
            print(f"{'':<20} transfer: " + ", ".join(f"{m} {c}" for m, c in sorted(transfer.items())))


def besides_connecting(stats: dict, phone: str) -> tuple[dict[str, int], int]:
    """(requests by method, not counting those made while connecting; how many those were)."""
    connecting = stats["connecting"].get(phone, {})
    calls = {method: count - connecting.get(method, 0) for method, count in stats["calls"].get(phone, {}).items()}
    return {method: count for method, count in calls.items() if count}, sum(connecting.values())


def _new_archive() -> dict:
    return {"name": "brand-new.zip", "archive": [{"path": "new/model.stl", "size": 500}]}


def one_cycle() -> None:
    from accounts.models import TelegramAccount
    from ingestion.models import IngestionRun
    from ingestion.pipeline import ingestion_run_execute

    run = IngestionRun.objects.create(account=TelegramAccount.objects.get(phone=READER), trigger="command")
    ingestion_run_execute(run_id=run.pk)


def one_cycle_in_this_process() -> None:
    import django

    django.setup()
    one_cycle()


class Baseline:
    """One history request per channel and per topic, from each one's watermark."""

    def __init__(self, world):
        self.world = world
        self.chats = [chat for chat in world.chats() if chat.get("role") == "source"]
        self.watermarks = {}

    def cycle(self) -> None:
        import asyncio

        from accounts.models import AccountChat, TelegramAccount
        from core.crypto import unseal
        from telegram.gateway import open_gateway
        from telegram.records import ChatRef

        account = TelegramAccount.objects.get(phone=BASELINE)
        hashes = dict(AccountChat.objects.filter(account=account).values_list("chat__telegram_id", "access_hash"))

        async def scan():
            async with open_gateway(phone=BASELINE, session=unseal(account.session_sealed)) as gateway:
                for chat in self.chats:
                    ref = ChatRef(id=chat["id"], access_hash=hashes[chat["id"]], type=chat["type"])
                    topics = [t["id"] for t in self.world.topics(chat["id"], limit=10_000)] if chat["forum"] else [None]
                    for topic in topics:
                        key = (chat["id"], topic)
                        page = await gateway.search_documents(ref, min_id=self.watermarks.get(key, 0), topic_id=topic)
                        if page.messages:
                            self.watermarks[key] = max(message.id for message in page.messages)

        asyncio.run(scan())


if __name__ == "__main__":
    main()
