"""A formatted broadcast: 300 groups × (a Markdown text + a 3-photo album), one run, against the sandbox.

Prints, from the sandbox's own record: the groups whose text arrived with its entities, the groups that got
exactly one album of the 3 photos (one grouped_id, the caption on its first item), the media uploads of the
whole run (goal 3: each photo once), and the send rate. The pace is time-scaled as in bench/fanout.py.

    .venv/bin/python -m bench.broadcast [--groups 300] [--scale 150]
"""

import argparse
import time
from collections import Counter

from bench.fanout import BURST, GROUP_BASE, png, send_in_processes
from bench.harness import bench_django, reminder_pace_scaled

SENDER = "+15550000401"
TEXT = "🎉 **Black Friday**: __30% off__ every kit, ||code BF30|| — [shop](https://shop.example)"
CAPTION = "<b>Three</b> new kits this week"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=300)
    parser.add_argument("--scale", type=int, default=150, help="How many times faster than real time.")
    parser.add_argument("--rtt-ms", type=int, default=80, help="Telegram's round trip, in real time.")
    args = parser.parse_args()
    per_minute = reminder_pace_scaled(scale=args.scale, burst=BURST)
    work = bench_django("broadcast")
    from django.conf import settings
    from django.core.files.base import ContentFile

    from accounts.models import Chat, TelegramAccount
    from bench.fanout import forget_paces
    from operations.sandbox import sandbox_authorize
    from reminders.services import PartSpec, ReminderSpec, TargetSpec, media_create, reminder_create, reminder_fire
    from telegram.formatting import entity_as_json, text_format
    from telegram.sandbox.loader import world_load
    from telegram.sandbox.world import World

    forget_paces()
    world_load(
        settings.SANDBOX_PATH,
        {
            "network": {"rtt_ms": max(1, round(args.rtt_ms / args.scale))},
            "accounts": [{"phone": SENDER, "first_name": "Broadcaster"}],
            "chats": [
                {"id": GROUP_BASE + n, "title": f"Group {n:04d}", "type": "supergroup", "members": [SENDER]}
                for n in range(args.groups)
            ],
        },
    )
    sandbox_authorize()
    world = World(settings.SANDBOX_PATH)
    photos = [media_create(file=ContentFile(png(48 + n), name=f"kit-{n}.png"), name=f"kit-{n}.png") for n in range(3)]
    reminder = reminder_create(
        spec=ReminderSpec(
            account=TelegramAccount.objects.get(phone=SENDER),
            name="Black Friday",
            timezone="UTC",
            window_start_hour=0,
            window_end_hour=24,
            parts=[
                PartSpec(text=TEXT, format="markdown"),
                PartSpec(album=photos, caption=CAPTION, format="html"),
            ],
            targets=[TargetSpec(chat=chat) for chat in Chat.objects.order_by("telegram_id")],
        )
    )
    print(f"{args.groups} groups × (Markdown text + 3-photo album); pace {per_minute}/min, time {args.scale}×")
    run = reminder_fire(reminder=reminder, enqueue=False)
    world.stats_reset()
    started = time.monotonic()
    (report,) = send_in_processes(work, [run])
    seconds = time.monotonic() - started
    assert report["status"] == "success", report

    text = text_format(TEXT, format="markdown")
    caption = text_format(CAPTION, format="html", caption=True)
    want_text = (text.text, [entity_as_json(e) for e in text.entities])
    want_caption = (caption.text, [entity_as_json(e) for e in caption.entities])
    shas = [photo.sha256 for photo in photos]
    formatted = albums_right = 0
    for n in range(args.groups):
        messages = [m for m in world.chat_dump(GROUP_BASE + n)["messages"] if m["sender"] == SENDER]
        formatted += any((m["text"], m["entities"]) == want_text for m in messages)
        groups = Counter(m["grouped_id"] for m in messages if m["grouped_id"])
        album = [m for m in messages if m["grouped_id"]]
        albums_right += (
            len(groups) == 1
            and [m["photo"]["sha256"] for m in album] == shas
            and (album[0]["text"], album[0]["entities"]) == want_caption
            and all(m["text"] == "" for m in album[1:])
        )
    calls = world.stats()["calls"][SENDER]
    print(f"groups with the formatted text: {formatted} of {args.groups}")
    print(f"groups with exactly one album of the 3 photos, caption formatted: {albums_right} of {args.groups}")
    print(
        f"media uploads in the run: {calls.get('messages.uploadMedia', 0)} (goal 3); "
        f"upload.saveFilePart {calls.get('upload.saveFilePart', 0)}"
    )
    print(
        f"requests: messages.sendMessage {calls.get('messages.sendMessage', 0)}, "
        f"messages.sendMultiMedia {calls.get('messages.sendMultiMedia', 0)}"
    )
    print(f"sending process: {seconds:.1f} s, {report['queries'] / args.groups:.2f} database queries per group")


if __name__ == "__main__":
    main()
