"""Previews made again from the kept raw files: after a catalog rebuild (which reads listings in place and
draws nothing), or when packages were listed before models were drawn."""

from django.core.management.base import BaseCommand

from packages.models import MetadataStatus, Package
from packages.services import package_previews_remake


class Command(BaseCommand):
    help = (
        "Make packages' previews again from their kept raw files: pictures inside and the main model's preview "
        "(a 3MF's own picture, else one drawn of its mesh). By default only packages without a preview."
    )

    def add_arguments(self, parser):
        parser.add_argument("--all", action="store_true", help="every listed package, not only those without one")
        parser.add_argument("--limit", type=int, default=0, help="at most this many packages (0: no limit)")

    def handle(self, *args, **options):
        packages = Package.objects.filter(metadata_status=MetadataStatus.COMPLETE, raw_files__isnull=False)
        if not options["all"]:
            packages = packages.filter(preview__isnull=True)
        packages = packages.distinct().order_by("pk")
        if options["limit"]:
            packages = packages[: options["limit"]]
        done = 0
        for package in packages.iterator():
            outcome = package_previews_remake(package=package)
            self.stdout.write(f"{package.pk} {package.file_name}: {outcome}")
            done += 1
        self.stdout.write(f"{done} package(s) looked at.")
