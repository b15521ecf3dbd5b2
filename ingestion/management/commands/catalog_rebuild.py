from django.core.management.base import BaseCommand, CommandError

from core.errors import OperatorError
from ingestion.services import catalog_rebuild_from_destination


class Command(BaseCommand):
    help = (
        "Rebuild or repair the package catalog from the destination channel alone (the catalog line in every "
        "upload's caption): missing packages are added, packages whose destination messages moved are repaired, "
        "and each added package's file listing is read back from its documents, in place where the archive "
        "allows (a RAR set is read in full)."
    )

    def handle(self, *args, **options):
        try:
            result = catalog_rebuild_from_destination(on_progress=self._progress)
        except OperatorError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(result.summary())
        for content_hash, missing in result.incomplete.items():
            self.stdout.write(f"  {content_hash[:12]}…: {missing}")
        for file_name, trouble in result.not_listed.items():
            self.stdout.write(f"  {file_name}: listing not read ({trouble}); the next rebuild tries again")

    def _progress(self, file_name: str, read, done: int, total: int) -> None:
        if read.listing is None:
            what = f"not read: {read.trouble}"
        elif read.listing.error is not None:
            what = f"unreadable archive: {read.listing.error}"
        else:
            what = f"{len(read.listing.entries)} files"
        how = "read in full" if read.full_read else "read in place"
        self.stdout.write(f"[{done}/{total}] {file_name}: {what} ({read.bytes_read:,} bytes {how})")
