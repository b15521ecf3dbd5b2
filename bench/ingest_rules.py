"""What each channel takes: a channel with 2,000 posts of history added "from now", and a filter.

1. "From now": a channel whose 2,000 documents are all history. Goal: its first cycle downloads nothing and
   sends at most 3 requests besides connecting. The same channel from its whole history is counted beside
   it (the count an operator sees before choosing it): search pages, nothing downloaded.
2. "zip and 7z, 1–500 MB": a channel with sets of every kind and size, some far above 500 MB. Goal: exactly
   the matching sets are taken (expected vs taken, by name), and nothing else is downloaded.

    .venv/bin/python -m bench.ingest_rules
"""

import time

from bench.harness import bench_django
from bench.scan_calls import besides_connecting, one_cycle

READER = "+15550000001"
WRITER = "+15550000009"
HISTORY = 1001
FILTERED = 1002
POSTS = 2000
MB = 1000**2
KINDS_TAKEN = ("zip", "7z")
SMALLEST, LARGEST = 1 * MB, 500 * MB


def archive(name: str, size: int, **extra) -> dict:
    return {"name": name, "archive": [{"path": f"{name}/model.stl", "size": size}], **extra}


def opaque(name: str, size: int) -> dict:
    return {"name": name, "size": size, "seed": name}


def history_messages() -> list[dict]:
    names = ("zip", "7z", "rar", "stl")
    return [{"id": 10 + n, "document": opaque(f"old-{n}.{names[n % 4]}", 200_000 + n)} for n in range(POSTS)]


def filtered_messages() -> list[dict]:
    """(message id, document): every kind, below, inside and above the range; multi-volume too."""
    documents = [
        archive("inside-a.zip", int(1.5 * MB)),
        archive("inside-b.zip", 3 * MB),
        archive("inside-c.7z", 2 * MB),
        archive("inside-volumes.7z", 3 * MB, volume_size=MB),
        archive("tiny.zip", 20_000),
        archive("tiny.7z", 200_000),
        opaque("wrong-kind.rar", 5 * MB),
        opaque("wrong-kind.part1.rar", 2 * MB),
        opaque("model.stl", 4 * MB),
        opaque("huge.zip", 700 * MB),
        opaque("huge.7z", 501 * MB),
    ]
    messages, next_id = [], 10
    for document in documents:
        messages.append({"id": next_id, "document": document})
        next_id += 10  # room for volumes
    return messages


def spec_size(document: dict) -> int:
    return sum(entry["size"] for entry in document["archive"]) if "archive" in document else document["size"]


def build_world() -> dict:
    def source(chat_id: int, title: str, messages: list[dict]) -> dict:
        return {
            "id": chat_id,
            "title": title,
            "type": "channel",
            "role": "source",
            "members": [READER],
            "messages": messages,
        }

    return {
        "accounts": [{"phone": phone, "first_name": phone[-2:], "code": "12345"} for phone in (READER, WRITER)],
        "chats": [
            source(HISTORY, "Ten years of posts", history_messages()),
            source(FILTERED, "Every kind and size", filtered_messages()),
            {
                "id": 9000,
                "title": "Archive",
                "type": "channel",
                "role": "destination",
                "members": [WRITER],
                "admins": [WRITER],
            },
        ],
    }


def main() -> None:
    bench_django("ingest_rules")
    from django.conf import settings

    from ingestion.models import Channel, IngestionRun, StartPoint
    from ingestion.rules import Rules, size_text
    from ingestion.services import channel_history_count, channel_rules_update, channel_update
    from operations.sandbox import sandbox_authorize
    from packages.models import Package
    from telegram.sandbox.loader import world_load
    from telegram.sandbox.world import World

    settings.INGEST_MAX_PACKAGE_BYTES = 2 * 1000**3
    started = time.monotonic()
    world_load(settings.SANDBOX_PATH, build_world())
    sandbox_authorize()
    print(
        f"world: {POSTS} posts of history and {len(filtered_messages())} sets, "
        f"loaded in {time.monotonic() - started:.1f} s"
    )
    world = World(settings.SANDBOX_PATH)
    history = Channel.objects.get(chat__telegram_id=HISTORY)
    filtered = Channel.objects.get(chat__telegram_id=FILTERED)

    # 1. From now ----------------------------------------------------------------------------------------------
    channel_update(channel=filtered, is_active=False)
    channel_rules_update(channel=history, start_from=StartPoint.NOW)
    world.stats_reset()
    one_cycle()
    run = IngestionRun.objects.latest("pk")
    asked, connecting = besides_connecting(world.stats(), READER)
    downloads = asked.get("upload.getFile", 0)
    shown = ", ".join(f"{method} {count}" for method, count in sorted(asked.items()))
    print(f"\n1. {POSTS} posts of history, added from now")
    print(f"   downloads: {downloads} requests, {run.bytes_downloaded} bytes (goal 0)")
    print(f"   requests besides connecting: {sum(asked.values())} ({shown}); goal ≤ 3; connecting {connecting}")
    print(f"   sets found {run.archives_found}, ingested {run.ingested}, messages read {run.messages_scanned}")
    world.stats_reset()
    started = time.monotonic()
    count = channel_history_count(channel=history, rules=Rules())
    asked, _ = besides_connecting(world.stats(), READER)
    print(
        f"   the whole history, counted first: {count.sets} sets, {size_text(count.bytes)}, in "
        f"{sum(asked.values())} requests besides connecting ({time.monotonic() - started:.1f} s), "
        f"downloads {asked.get('upload.getFile', 0)}"
    )

    # 2. zip and 7z, 1–500 MB ------------------------------------------------------------------------------------
    channel_update(channel=history, is_active=False)
    channel_update(channel=filtered, is_active=True)
    channel_rules_update(channel=filtered, take_kinds=list(KINDS_TAKEN), min_bytes="1 MB", max_bytes="500 MB")
    # From the world file, not from our code: an archive weighs its entry and a little more; every size here is
    # far enough from the bounds for that not to matter. A set is named by its first volume.
    expected = sorted(
        message["document"]["name"] + (".001" if "volume_size" in message["document"] else "")
        for message in filtered_messages()
        if message["document"]["name"].rsplit(".", 1)[-1] in KINDS_TAKEN
        and SMALLEST <= spec_size(message["document"]) <= LARGEST
    )
    world.stats_reset()
    started = time.monotonic()
    one_cycle()
    run = IngestionRun.objects.latest("pk")
    taken = sorted(Package.objects.filter(source_chat_id=filtered.chat_id).values_list("file_name", flat=True))
    asked, _ = besides_connecting(world.stats(), READER)
    print(f"\n2. zip and 7z, {size_text(SMALLEST)}–{size_text(LARGEST)}: {len(filtered_messages())} sets posted")
    print(f"   expected {len(expected)}: {', '.join(expected)}")
    print(f"   taken    {len(taken)}: {', '.join(taken)}")
    print(f"   {'exactly the matching sets' if taken == expected else 'MISMATCH'}; filtered {run.filtered}, "
          f"skipped {run.skipped}, downloaded {size_text(run.bytes_downloaded)} in {asked.get('upload.getFile', 0)} "
          f"requests ({time.monotonic() - started:.1f} s)")  # fmt: skip


if __name__ == "__main__":
    main()
