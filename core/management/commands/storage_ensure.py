from django.core.management.base import BaseCommand, CommandError

from core.storage import StorageUnusable, storage_ensure


class Command(BaseCommand):
    help = "Check that media and raw files can be kept (the bucket is made when it is missing)."

    def handle(self, *args, **options):
        try:
            where = storage_ensure()
        except StorageUnusable as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Media and raw files are kept in {where}.")
