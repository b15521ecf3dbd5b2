from django.core.management.base import BaseCommand, CommandError

from core.errors import OperatorError
from ingestion.services import catalog_rebuild_from_destination


class Command(BaseCommand):
    help = (
        "Rebuild or repair the package catalog from the destination channel alone (the catalog line in every "
        "upload's caption): missing packages are added, packages whose destination messages moved are repaired."
    )

    def handle(self, *args, **options):
        try:
            result = catalog_rebuild_from_destination()
        except OperatorError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(result.summary())
        for content_hash, missing in result.incomplete.items():
            self.stdout.write(f"  {content_hash[:12]}…: {missing}")
