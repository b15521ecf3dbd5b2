import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from telegram.management.world import sandbox_world_open


class Command(BaseCommand):
    help = "Add a message to a sandbox chat as if someone outside the project posted it; prints its id."

    def add_arguments(self, parser):
        parser.add_argument("chat_id", type=int)
        parser.add_argument("--text", default="", help="the message text, or the caption of a document")
        document = parser.add_mutually_exclusive_group()
        document.add_argument("--document", metavar="NAME", help="an opaque document of --size bytes from --seed")
        document.add_argument("--file", metavar="PATH", help="post this file's real bytes (e.g. made by zip or 7z)")
        document.add_argument(
            "--photo", metavar="SEED", help="a photo: a real picture made from SEED (--text: caption)"
        )
        document.add_argument(
            "--archive-json",
            metavar="JSON",
            help='a world-file document, e.g. \'{"name": "a.zip", "archive": [{"path": "a.stl", "size": 100}]}\'',
        )
        parser.add_argument("--name", help="the --file's name in Telegram (default: its own name)")
        parser.add_argument("--size", type=int, help="bytes of the --document")
        parser.add_argument("--seed", help="seed of the --document's bytes (default: its name)")
        parser.add_argument("--volume-size", type=int, help="split the document into volumes of this many bytes")
        parser.add_argument("--topic", type=int, help="forum topic id")
        parser.add_argument("--album", type=int, help="post it in this album (Telegram's grouped_id)")
        parser.add_argument("--reply-to", type=int, help="the id of the message it answers")

    def handle(
        self,
        *args,
        chat_id,
        text,
        document,
        file,
        photo,
        name,
        archive_json,
        size,
        seed,
        volume_size,
        topic,
        album,
        reply_to,
        **options,
    ):
        spec = None
        if name and not file:
            raise CommandError("--name names a --file.")
        if file:
            path = Path(file)
            if not path.is_file():
                raise CommandError(f"{path}: no such file.")
            spec = {"name": name or path.name, "file": str(path.resolve())}
        elif document:
            if size is None:
                raise CommandError("--document needs --size.")
            spec = {"name": document, "size": size, "seed": seed if seed is not None else document}
        elif archive_json:
            try:
                spec = json.loads(archive_json)
            except json.JSONDecodeError as exc:
                raise CommandError(f"--archive-json is not valid JSON ({exc}).") from None
        elif not text and not photo:
            raise CommandError("Give --text, --document, --file, --photo or --archive-json.")
        if isinstance(spec, dict) and volume_size is not None:
            spec["volume_size"] = volume_size
        with sandbox_world_open() as world:
            ids = world.message_post(
                chat_id, text=text, document=spec, photo=photo, topic=topic, album=album, reply_to=reply_to
            )
        for message_id in ids:
            self.stdout.write(str(message_id))
