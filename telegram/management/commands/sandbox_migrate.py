from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from telegram.sandbox.world import World, WorldError


class Command(BaseCommand):
    help = "Upgrade a basic group of the sandbox to a supergroup, as Telegram's messages.migrateChat does."

    def add_arguments(self, parser):
        parser.add_argument("group_id", type=int)
        parser.add_argument("supergroup_id", type=int, help="a supergroup of the world: the group's new home")

    def handle(self, *args, group_id: int, supergroup_id: int, **options):
        try:
            world = World(settings.SANDBOX_PATH)
            try:
                world.chat_migrate(group_id, supergroup_id)
            finally:
                world.close()
        except WorldError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Group {group_id} migrated to supergroup {supergroup_id}.")
