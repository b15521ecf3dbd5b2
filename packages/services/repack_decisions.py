"""Likely repacks: marking a package "likely the same as" an earlier one, and the operator's answer."""

from django.db import transaction

from core.errors import OperatorError
from packages.models import Package, RepackDecision, SkippedFingerprint
from packages.repacks import ListedFile, likely_same_find


def package_repack_recognise(*, package: Package) -> Package:
    """Mark the package "likely the same as" an earlier one whose listing it (nearly) repeats."""
    files = [
        ListedFile(path=path, size=size, crc32=crc)
        for path, size, crc in package.files.values_list("path", "size", "crc32")
    ]
    found = likely_same_find(package=package, files=files)
    package.likely_same_as = found.package if found else None
    package.likely_same_overlap = found.overlap if found else None
    package.save(update_fields=["likely_same_as", "likely_same_overlap"])
    return package


class RepackDecisionRefused(OperatorError):
    """The package is not marked as a likely repack, or the decision is not one we know."""


def package_repack_decide(*, package: Package, decision: str) -> Package:
    """The operator's answer to "likely the same as …": keep both (the mark is dismissed), or keep this one and
    skip future copies with this listing (and the original's) — they count as duplicates of the original."""
    if package.likely_same_as_id is None:
        raise RepackDecisionRefused(f"{package.file_name} is not marked as a likely repack of another package.")
    if decision not in RepackDecision.values:
        raise RepackDecisionRefused(f"Unknown decision {decision!r}; use one of {', '.join(RepackDecision.values)}.")
    with transaction.atomic():
        package.repack_decision = decision
        package.save(update_fields=["repack_decision"])
        fingerprints = {package.listing_fingerprint, package.likely_same_as.listing_fingerprint} - {""}
        if decision == RepackDecision.SKIP_COPIES:
            for fingerprint in fingerprints:
                SkippedFingerprint.objects.get_or_create(
                    fingerprint=fingerprint, defaults={"package_id": package.likely_same_as_id}
                )
        else:
            SkippedFingerprint.objects.filter(fingerprint__in=fingerprints).delete()
    return package
