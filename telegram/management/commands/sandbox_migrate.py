from django.core.management.base import BaseCommand

from telegram.management.world import sandbox_world_open


class Command(BaseCommand):
    help = "Upgrade a basic group of the sandbox to a supergroup, as Telegram's messages.migrateChat does."

    def add_arguments(self, parser):
        parser.add_argument("group_id", type=int)
        parser.add_argument("supergroup_id", type=int, help="a supergroup of the world: the group's new home")

    def handle(self, *args, group_id: int, supergroup_id: int, **options):
        with sandbox_world_open() as world:
            world.chat_migrate(group_id, supergroup_id)
        self.stdout.write(f"Group {group_id} migrated to supergroup {supergroup_id}.")
