import json

from django.core.management.base import BaseCommand

from telegram.management.world import sandbox_world_open


class Command(BaseCommand):
    help = "Telegram API requests counted by the sandbox, per account and method (connecting counted apart)."

    def add_arguments(self, parser):
        parser.add_argument(
            "--json",
            action="store_true",
            dest="as_json",
            help='print {"calls": {phone: {method: count}}, "connecting": {...}, "sessions": {phone: '
            '{"duplicated": N, "max_processes": M}}, "flood_waits": {phone: N}}',
        )
        parser.add_argument("--reset", action="store_true", help="start counting from zero after printing")

    def handle(self, *args, as_json: bool, reset: bool, **options):
        with sandbox_world_open() as world:
            stats = world.stats()
            if reset:
                world.stats_reset()
        if as_json:
            self.stdout.write(json.dumps(stats, indent=2, sort_keys=True))
            return
        if not stats["calls"]:
            self.stdout.write("No requests counted.")
        for phone, methods in stats["calls"].items():
            connecting = stats["connecting"].get(phone, {})
            sessions = stats["sessions"].get(phone, {})
            self.stdout.write(
                f"{phone}: {sum(methods.values())} requests ({sum(connecting.values())} while connecting), "
                f"{stats['flood_waits'].get(phone, 0)} FloodWaits, sessions used from two processes at once "
                f"{sessions.get('duplicated', 0)} times, at most {sessions.get('max_processes', 0)} processes"
            )
            for method, count in methods.items():
                self.stdout.write(f"  {method:<32} {count}")
